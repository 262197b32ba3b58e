// Pass: fuse an epilogue into the stores of a kernel's output (TVM's "fused write-back"):
// every `buffer[indices] = v` into `target` becomes `buffer[indices] = epilogue(v, indices)`,
// so that a bias, a residual Add or an activation costs no pass over memory of its own.
// An IR pass of a model's graph, not of the builder's lowering pipeline (builder/lower.h): which
// buffer and which epilogue come from the compiler (compiler/compile_model.cc), before a program
// is tuned or built.
#pragma once

#include <functional>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"

namespace kiln::ir::passes {

using Epilogue = std::function<Expr(const Expr& value, const std::vector<Expr>& idx)>;

// `program` with the epilogue applied to every store into `target` (one of its buffers).
// kUnimplemented when that would be wrong or impossible: a stage reads `target` back (it
// accumulates in the output, so the epilogue would apply more than once), or a store into it has
// no per-dimension indices (ir::StoreFlat).
Result<Program> fuse_epilogue(const Program& program, const Buffer& target,
                              const Epilogue& epilogue);

}  // namespace kiln::ir::passes
