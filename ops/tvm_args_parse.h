// Reading TVM task args (autotvm.md §2) back into workload parameters: the pieces the operators'
// Operator::from_tvm_args share. Errors name the argument (`what`) and show what was found.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "ops/template.h"
#include "ops/workload.h"

namespace kiln::ops {

// A TENSOR arg ["TENSOR", [dims...], "float32"] of `rank` dims -> its dims.
Result<std::vector<int64_t>> tvm_tensor_dims(const nlohmann::json& arg, size_t rank,
                                             const char* what);

// The workload of TVM's task for a kernel of workload `w` (normalized by `tmpl`): what its TVM
// args read back as. It differs from `w` only where kiln's kernel computes more than TVM's task
// (dense's fused bias: TVM's dense task has none), so that records, task listings and TVM logs
// name one task. `w` itself when the args do not read back (an operator without a mapping).
Workload task_workload(const Template& tmpl, const Workload& w);

// list[i] of an integer list arg (strides, padding, dilation).
Result<int64_t> tvm_int_at(const nlohmann::json& list, size_t i, const char* what);

}  // namespace kiln::ops
