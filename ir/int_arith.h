// Integer floor division and floor modulo: what ExprKind::kDiv and kMod mean on integers (as
// TVM's floordiv/floormod). The constant folder and the interpreter both evaluate them with these
// functions, so a folded index and an interpreted one can never disagree; the code generator
// emits the same arithmetic as LLVM instructions (builder/codegen_llvm.cc).
#pragma once

#include <cstdint>

namespace kiln::ir {

// a / b rounded toward negative infinity: -7 / 2 = -4, 7 / -2 = -4.
// REQUIRES b != 0 and not (a == INT64_MIN and b == -1).
constexpr int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;  // C++ truncates toward zero
  // Truncation rounded up exactly when the division is inexact and the signs differ.
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// The remainder of floor_div, which takes the sign of the divisor: -7 % 2 = 1, 7 % -2 = -1.
// REQUIRES b != 0.
constexpr int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace kiln::ir
