// Which program buffers a stage reads and which it writes, by position in Program::buffers
// (local buffers excluded): how the compiler decides what can run at compile time and which
// buffers a step needs at run time.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace kiln::compiler {

struct StageAccess {
  std::vector<int> reads;   // buffers loaded from, ascending
  std::vector<int> writes;  // buffers stored to, ascending
};

StageAccess stage_access(const ir::Program& program, const ir::Stage& stage);

}  // namespace kiln::compiler
