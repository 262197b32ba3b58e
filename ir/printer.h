// Human-readable text of IR: C-like, one statement per line, loops annotated with their kind.
#pragma once

#include <string>

#include "ir/ir.h"

namespace kiln::ir {

std::string to_string(const Expr& expr);
std::string to_string(const Stmt& stmt, int indent = 0);
std::string to_string(const Program& program);

}  // namespace kiln::ir
