// Reading TVM task args (autotvm.md §2) back into workload parameters: the pieces the operators'
// Operator::from_tvm_args share. Errors name the argument (`what`) and show what was found.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"

namespace kiln::ops {

// A TENSOR arg ["TENSOR", [dims...], "float32"] of `rank` dims -> its dims.
Result<std::vector<int64_t>> tvm_tensor_dims(const nlohmann::json& arg, size_t rank,
                                             const char* what);

// list[i] of an integer list arg (strides, padding, dilation).
Result<int64_t> tvm_int_at(const nlohmann::json& list, size_t i, const char* what);

}  // namespace kiln::ops
