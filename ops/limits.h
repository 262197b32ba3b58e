// Limits every template applies to the programs it generates: a config beyond them is an
// InstantiationError (like AutoTVM's max_unroll), never a build that exhausts the stack or
// spends seconds in LLVM on a body no faster than a smaller one.
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

}  // namespace kiln::ops
