// Limits every template applies to the programs it generates, so that no build exhausts the
// stack or spends seconds in LLVM on a body no faster than a smaller one. A config beyond them
// is not refused (TVM builds it): the template reshapes its loop nest to fit
// (ops/schedule_util.h).
#pragma once

#include <cstdint>
#include <string>

namespace kiln::ops {

// Bytes of one local (stack) buffer: the code generator's cap on Allocate.
inline constexpr int64_t kMaxLocalBytes = 64 * 1024;
inline constexpr int64_t kMaxLocalFloats = kMaxLocalBytes / 4;

// Target-width SIMD statements in one fully unrolled block. Register tiles that reach library
// speed need far fewer (dense: 16-32 FMAs per k step, a few k steps unrolled); beyond this,
// compile time grows quickly while registers spill.
inline constexpr int64_t kMaxUnrolledVectorOps = 256;

// Workload sizes every template accepts: a dimension of at most 2^24 and tensors of at most 2^34
// elements (64 GiB of float32; index arithmetic stays far from int64 overflow). Larger shapes
// are invalid workloads, whose error states these limits (kShapeLimitsText).
inline constexpr int64_t kMaxDim = int64_t{1} << 24;
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 34;
inline const std::string kShapeLimitsText =
    "shape too large: kiln supports dimensions up to 2^24 (16777216) and tensors up to 2^34 "
    "(17179869184) elements";

// What a nest beyond kMaxUnrolledVectorOps is cut down to (schedule_util.h's limit_unrolling):
// its accumulator is then in memory or its loop carried anyway, and small unrolled bodies keep
// its build time near that of configs within the limit (build_bench: a cut to 256 tripled the
// median build time of dense 1024^3; 16 kept it at the old median).
inline constexpr int64_t kReshapedUnrollOps = 16;

}  // namespace kiln::ops
