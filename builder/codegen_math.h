// LLVM IR for the IR's math calls (ir::CallOp), on a float32 scalar or a vector of float32.
//
// Contract: emit_math_call(builder, module, op, a, b) returns op(a[, b]) with the operands' type
// (a and b, when given, have the same type: both scalars or both vectors of the same width).
// Per op:
//  - sqrt, abs, floor, ceil: LLVM intrinsics (one instruction each on x86-64 with SSE4.1);
//  - log, pow: llvm.log / llvm.pow, which the backend lowers to calls of libm's logf / powf
//    (one per lane on vectors);
//  - exp: inline, vectorizable (Cody-Waite range reduction and a degree-6 polynomial; relative
//    error within 2 ulp, subnormal results, overflow to +inf, exp(-inf) = 0, NaN passes);
//  - tanh: inline and vectorizable on top of exp (odd polynomial below |x| = 0.625, then
//    1 - 2/(exp(2|x|) + 1) with the sign of x), within a few ulp; NaN passes, tanh(+-inf) = +-1;
//  - erf: inline and vectorizable, a rational function of degrees 13 and 8 on x clamped to
//    [-4, 4] (Eigen's float erf); NaN passes, erf(+-inf) = +-1.
// libm is not linked into the generated shared object: its symbols resolve, at dlopen, from
// the loading process (kiln and its runner children link libm through libstdc++).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "ir/ir.h"

namespace kiln::builder {

llvm::Value* emit_math_call(llvm::IRBuilder<>& b, llvm::Module& module, ir::CallOp op,
                            llvm::Value* a, llvm::Value* second = nullptr);

}  // namespace kiln::builder
