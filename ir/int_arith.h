// Integer floor division and floor modulo: what ExprKind::kDiv and kMod mean on integers (as
// TVM's floordiv/floormod). The constant folder and the interpreter both evaluate them with these
// functions, so a folded index and an interpreted one can never disagree; the code generator
// emits the same arithmetic as LLVM instructions (builder/codegen_llvm.cc).
// Also the divisor search that templates pick factors with and the unroll pass splits loops by.
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

// The largest divisor of n that is <= limit (1 when limit < 2 or n < 2), as TVM's fallbacks pick
// factors and unrolling splits a loop.
constexpr int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = n < limit ? n : limit; d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

}  // namespace kiln::ir
