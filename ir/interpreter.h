// A direct, slow evaluator of the IR. It defines what a program means, independent of the
// code generator: tests compare generated kernels with it on small shapes, and templates can
// be checked without LLVM.
#pragma once

#include <vector>

#include "common/status.h"
#include "ir/ir.h"

namespace kiln::ir {

// Runs the stages of `program` in order. `buffers` has one pointer per program buffer (in
// Program::buffers order), each to num_elements() floats. Fails with a message naming the
// buffer and index on an out-of-bounds access instead of touching memory outside a buffer.
Status interpret(const Program& program, const std::vector<float*>& buffers);

}  // namespace kiln::ir
