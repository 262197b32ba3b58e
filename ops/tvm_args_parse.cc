#include "ops/tvm_args_parse.h"

#include <string>

#include "ops/registry.h"

namespace kiln::ops {

Result<std::vector<int64_t>> tvm_tensor_dims(const nlohmann::json& arg, size_t rank,
                                             const char* what) {
  if (!arg.is_array() || arg.size() != 3 || arg[0] != "TENSOR" || !arg[1].is_array() ||
      arg[1].size() != rank) {
    return InvalidArgument(std::string(what) + ": expected [\"TENSOR\", [" + std::to_string(rank) +
                           " dims], dtype], got " + arg.dump());
  }
  std::vector<int64_t> dims;
  for (const nlohmann::json& d : arg[1]) {
    if (!d.is_number_integer()) return InvalidArgument(std::string(what) + ": non-integer dim");
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

Workload task_workload(const Template& tmpl, const Workload& w) {
  const Operator* op = find_operator(tmpl.op());
  if (!op) return w;
  Result<Workload> raw = op->from_tvm_args(tmpl.tvm_args(w));
  if (!raw.ok()) return w;
  Result<Workload> task = tmpl.normalize(*raw);
  return task.ok() ? *task : w;
}

Result<int64_t> tvm_int_at(const nlohmann::json& list, size_t i, const char* what) {
  if (!list.is_array() || list.size() <= i || !list[i].is_number_integer()) {
    return InvalidArgument(std::string(what) + ": expected an integer list, got " + list.dump());
  }
  return list[i].get<int64_t>();
}

}  // namespace kiln::ops
