// The lowering pipeline: the IR passes (ir/passes/) a stage's body goes through before the
// emitter (codegen_llvm.h) translates it, in this fixed order:
//   1. split_wide_simd         rewrite: SIMD bodies wider than a target vector and not a power
//                              of two become bodies of whole vectors (ir/passes/split_simd.h);
//                              first, so that the analyses see the loops that are emitted;
//   2. ordered_reductions      analysis: the schedule's unrolled loops that are emitted as one
//                              ordered vector reduction (ir/passes/ordered_reduction.h);
//   3. unroll_register_locals  rewrite: serial loops over a local buffer the vector registers
//                              hold become unrolled (ir/passes/unroll.h); after 2, so that the
//                              loops it unrolls are emitted iteration by iteration;
//   4. expand_unrolled         rewrite: unrolled loops (but the reductions of 2) and loops of
//                              extent 0 or 1 become copies of their bodies, one per iteration
//                              (ir/passes/expand_unrolled.h);
//   5. simd_legality           analysis: the vectorized loops emitted as SIMD bodies
//                              (ir/passes/simd_legality.h);
//   6. forward_stores          rewrite: scalar loads of values stored earlier in the same basic
//                              block become those values (named by Lets), and stores overwritten
//                              before a read are dropped (ir/passes/forward_stores.h); last,
//                              because its regions are the basic blocks the emitter makes.
// Analyses leave the body as it is; their results are node sets of the body, which the
// LoweredStage keeps alive, and a rewrite after an analysis maps them to its own nodes. The
// emitter then only translates: the loops left are emitted as loops, SIMD bodies or ordered
// reductions, and it numbers index arithmetic within a basic block so that each distinct integer
// operation is emitted once (value numbering of what it emits, not a rewrite of the IR).
// Epilogue fusion (compiler/fuse_epilogue.h) is an IR pass too, but of a model's graph: which
// buffer and which epilogue come from the compiler, before a program reaches the builder.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "exchange/target.h"
#include "ir/ir.h"
#include "ir/passes/ordered_reduction.h"
#include "ir/passes/simd_legality.h"

namespace kiln::builder {

// A stage's body after the pipeline, with the analyses' decisions about its loops.
struct LoweredStage {
  ir::Stmt body;
  ir::passes::OrderedReductions ordered_reductions;
  ir::passes::SimdLoops simd_loops;
};

// What the passes need to know about the target.
struct LoweringOptions {
  // Floats the vector registers hold: a local buffer up to this size is unrolled over
  // (unroll_register_locals).
  int64_t register_floats = 0;
  // float32 lanes of the target's widest vector (split_wide_simd); 0 leaves SIMD bodies whole.
  int simd_lanes = 0;
};

// The options for `target`, from its description (exchange/target_description.h:
// TargetDescription::register_floats).
LoweringOptions lowering_options(const Target& target);

// One step of the pipeline, as lower_stage reports it.
struct LoweringPass {
  const char* name;
  void (*run)(LoweredStage& stage, const LoweringOptions& options);
  // For an analysis: what it chooses ("simd") and whether it chose a loop; null for rewrites.
  const char* chooses;
  bool (*chose)(const LoweredStage& stage, const ir::StmtNode* loop);
};

// Called after each pass with the stage as that pass left it.
using PassObserver = std::function<void(const LoweringPass& pass, const LoweredStage& stage)>;

// Runs the pipeline over one stage's body.
LoweredStage lower_stage(const ir::Stmt& body, const LoweringOptions& options,
                         const PassObserver& observer = nullptr);

// Every stage of `program` printed after each pass, headed by the stage and the pass name, with
// the loops an analysis chose listed under its IR (for `kiln show --passes`).
std::string lowering_trace(const ir::Program& program, const Target& target);

}  // namespace kiln::builder
