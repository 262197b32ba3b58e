// IR -> LLVM: turns a Program into native code for a Target.
//
// Each Stage goes through the lowering pipeline (builder/lower.h), which decides the loop shapes
// below, and becomes an exported function of type kiln_stage_fn (runtime/kernel_abi.h). Loop
// kinds are honoured as follows:
//  - vectorized: a straight-line body (stores of loads and arithmetic) becomes one SIMD body
//    whose lanes are the loop variable: unit-stride accesses are vector loads/stores, accesses
//    that do not depend on the variable are broadcasts, others gathers/scatters. A body that
//    is not straight-line, or that could read a value another lane writes, stays a scalar loop
//    (with LLVM's vectorizer hint) so the result is always that of the serial loop.
//  - unrolled: the lowering pipeline has expanded these, but for one kind: a body that only
//    accumulates consecutive elements into one scalar (D[i] = D[i] + X[j + v]) becomes one
//    vector load and an ordered vector reduction (the same additions in the same order).
//  - serial: a loop (the pipeline has made unrolled, and expanded, the serial loops over local
//    buffers small enough for the vector registers).
//  - parallel: the outermost parallel loop is outlined and run through
//    KilnRuntimeApi::parallel_for; parallel loops nested in it run serially.
// Every buffer access carries alias-scope metadata saying distinct buffers never overlap, and
// local buffers are stack arrays that LLVM promotes to registers when their indices are
// constant. Within a basic block, index arithmetic is emitted once per distinct operation (the
// pipeline has already forwarded stored values and dropped dead stores): the optimizer's time
// grows with the IR it is given. The module then goes through LLVM's O3 pipeline for the target
// CPU.
// What depends on the target (function attributes, register budget, math lowering, gathers and
// scatters, data layout) is asked of the target's CodegenTarget (codegen_target.h).
#pragma once

#include <string>

#include "builder/target.h"
#include "common/status.h"
#include "ir/ir.h"

namespace kiln::builder {

struct CompileTimings {
  double codegen_ms = 0;   // IR -> LLVM IR
  double optimize_ms = 0;  // the O3 pipeline
  double emit_ms = 0;      // machine code generation
};

// Compiles every stage of `program` into one ELF relocatable object. Fails (kCompile) with a
// message naming the stage for IR the code generator cannot handle (an unbound variable, a
// local buffer over the stack limit) or an LLVM failure. Thread-safe.
Result<std::string> compile_program(const ir::Program& program, const Target& target,
                                    CompileTimings* timings = nullptr);

// The module's LLVM IR as text, before or after optimization (for `kiln show` and tests).
Result<std::string> program_llvm_ir(const ir::Program& program, const Target& target,
                                    bool optimized);

// Assembly text of the optimized module (for inspecting the generated machine code).
Result<std::string> program_assembly(const ir::Program& program, const Target& target);

}  // namespace kiln::builder
