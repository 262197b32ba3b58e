#include "builder/codegen_math.h"

#include <llvm/IR/Intrinsics.h>

#include <iterator>
#include <string>

#include "common/check.h"

namespace kiln::builder {

namespace {

// A float constant of `type` (a splat when `type` is a vector).
llvm::Value* fconst(llvm::Type* type, double value) { return llvm::ConstantFP::get(type, value); }

// The integer type with one i32 per lane of `type`.
llvm::Type* int_type_like(llvm::Type* type) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(type->getContext());
  if (auto* v = llvm::dyn_cast<llvm::VectorType>(type)) {
    return llvm::VectorType::get(i32, v->getElementCount());
  }
  return i32;
}

// 2^k as a float for integers k in [-126, 127] (builds the exponent field directly).
llvm::Value* pow2(llvm::IRBuilder<>& b, llvm::Value* k, llvm::Type* ftype) {
  llvm::Value* biased = b.CreateAdd(k, llvm::ConstantInt::get(k->getType(), 127));
  return b.CreateBitCast(b.CreateShl(biased, llvm::ConstantInt::get(k->getType(), 23)), ftype);
}

// exp(x), after Cephes' expf: x = n*ln2 + r with |r| <= ln2/2, exp(r) by a polynomial, then
// scaled by 2^n in two steps so that results down to the subnormals come out right.
llvm::Value* emit_exp(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* ft = x->getType();
  llvm::Type* it = int_type_like(ft);
  // Beyond these bounds exp overflows to inf or underflows to 0 in float32; clamping keeps n in
  // the range pow2 handles. maxnum/minnum also turn NaN into a bound (fixed up at the end).
  llvm::Value* xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, fconst(ft, -104.0));
  xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, xc, fconst(ft, 89.0));
  // n = round(x / ln2): adding 1.5 * 2^23 rounds to an integer in the low mantissa bits.
  const double kShifter = 12582912.0;
  llvm::Value* t =
      b.CreateFAdd(b.CreateFMul(xc, fconst(ft, 1.44269504088896341)), fconst(ft, kShifter));
  llvm::Value* nf = b.CreateFSub(t, fconst(ft, kShifter));
  llvm::Value* n = b.CreateSub(b.CreateBitCast(t, it), b.CreateBitCast(fconst(ft, kShifter), it));
  // r = x - n*ln2, with ln2 split in two so that n*C1 is exact.
  llvm::Value* r = b.CreateFSub(xc, b.CreateFMul(nf, fconst(ft, 0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(nf, fconst(ft, -2.12194440e-4)));
  const double kP[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                       4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
  llvm::Value* p = fconst(ft, kP[0]);
  for (int i = 1; i < 6; ++i) p = b.CreateFAdd(b.CreateFMul(p, r), fconst(ft, kP[i]));
  llvm::Value* y = b.CreateFAdd(b.CreateFMul(p, b.CreateFMul(r, r)), r);
  y = b.CreateFAdd(y, fconst(ft, 1.0));
  // 2^n = 2^(n/2) * 2^(n - n/2): each factor is a normal float for n in [-151, 129].
  llvm::Value* n1 = b.CreateAShr(n, llvm::ConstantInt::get(it, 1));
  llvm::Value* n2 = b.CreateSub(n, n1);
  llvm::Value* result = b.CreateFMul(b.CreateFMul(y, pow2(b, n1, ft)), pow2(b, n2, ft));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

// tanh(x), after Cephes' tanhf.
llvm::Value* emit_tanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* ft = x->getType();
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // Small |x|: x + x^3 * P(x^2).
  llvm::Value* z = b.CreateFMul(x, x);
  const double kP[] = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1,
                       -3.33332819422E-1};
  llvm::Value* p = fconst(ft, kP[0]);
  for (int i = 1; i < 5; ++i) p = b.CreateFAdd(b.CreateFMul(p, z), fconst(ft, kP[i]));
  llvm::Value* small = b.CreateFAdd(b.CreateFMul(b.CreateFMul(p, z), x), x);
  // Large |x|: 1 - 2/(exp(2|x|) + 1), which is 1 once exp overflows to inf; the sign of x back.
  llvm::Value* e = emit_exp(b, b.CreateFAdd(ax, ax));
  llvm::Value* large = b.CreateFSub(
      fconst(ft, 1.0), b.CreateFDiv(fconst(ft, 2.0), b.CreateFAdd(e, fconst(ft, 1.0))));
  large = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  // NaN compares false and takes the small branch, which propagates it.
  return b.CreateSelect(b.CreateFCmpOGE(ax, fconst(ft, 0.625)), large, small);
}

// erf(x) as a rational function x * P(x^2) / Q(x^2) of degrees 13 and 8, with x clamped to
// [-4, 4] (beyond, erf is +-1 in float32); the coefficients are Eigen's and TensorFlow's float
// erf. Vectorizes as a few FMAs and one division per lane, where libm's erff was a scalar call
// per lane (BERT's GELU kernel spent 3.4 ns an element in it).
llvm::Value* emit_erf(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* ft = x->getType();
  llvm::Value* xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, fconst(ft, -4.0));
  xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, xc, fconst(ft, 4.0));
  llvm::Value* x2 = b.CreateFMul(xc, xc);
  const double kAlpha[] = {-2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06,
                           -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                           -1.60960333262415e-02};
  const double kBeta[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                          -7.37332916720468e-03, -1.42647390514189e-02};
  llvm::Value* p = fconst(ft, kAlpha[0]);
  for (size_t i = 1; i < std::size(kAlpha); ++i) {
    p = b.CreateFAdd(b.CreateFMul(p, x2), fconst(ft, kAlpha[i]));
  }
  p = b.CreateFMul(p, xc);
  llvm::Value* q = fconst(ft, kBeta[0]);
  for (size_t i = 1; i < std::size(kBeta); ++i) {
    q = b.CreateFAdd(b.CreateFMul(q, x2), fconst(ft, kBeta[i]));
  }
  // maxnum/minnum turned NaN into a bound: NaN back.
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, b.CreateFDiv(p, q));
}

}  // namespace

llvm::Value* emit_math_call(llvm::IRBuilder<>& b, llvm::Module& module, ir::CallOp op,
                            llvm::Value* a, llvm::Value* second) {
  KILN_CHECK(a->getType()->getScalarType()->isFloatTy()) << "math call on a non-float operand";
  KILN_CHECK((second != nullptr) == (ir::call_op_arity(op) == 2))
      << ir::call_op_name(op) << ": wrong number of operands";
  (void)module;  // libm functions come through LLVM's intrinsics (log, pow), not named calls
  switch (op) {
    case ir::CallOp::kExp:
      return emit_exp(b, a);
    case ir::CallOp::kLog:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::log, a);
    case ir::CallOp::kSqrt:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
    case ir::CallOp::kTanh:
      return emit_tanh(b, a);
    case ir::CallOp::kErf:
      return emit_erf(b, a);
    case ir::CallOp::kPow:
      KILN_CHECK(a->getType() == second->getType()) << "pow: operands of different types";
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, second);
    case ir::CallOp::kAbs:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
    case ir::CallOp::kFloor:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a);
    case ir::CallOp::kCeil:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a);
  }
  KILN_UNREACHABLE("unknown math call");
}

}  // namespace kiln::builder
