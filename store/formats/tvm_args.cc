#include "store/formats/tvm_args.h"

#include <string>

#include "ops/registry.h"

namespace kiln::store {

namespace {

using nlohmann::json;

// TVM args -> kiln workload parameters, for the operators kiln has templates for. The inverse
// of each template's tvm_args(); workload_from_tvm_args checks the round trip, so an arg list
// this mapping reads wrongly is rejected rather than imported as another workload.

// A TENSOR arg ["TENSOR", [dims...], "float32"] -> its dims.
Result<std::vector<int64_t>> tensor_dims(const json& arg, size_t rank, const char* what) {
  if (!arg.is_array() || arg.size() != 3 || arg[0] != "TENSOR" || !arg[1].is_array() ||
      arg[1].size() != rank) {
    return InvalidArgument(std::string(what) + ": expected [\"TENSOR\", [" + std::to_string(rank) +
                           " dims], dtype], got " + arg.dump());
  }
  std::vector<int64_t> dims;
  for (const json& d : arg[1]) {
    if (!d.is_number_integer()) return InvalidArgument(std::string(what) + ": non-integer dim");
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

Result<int64_t> int_at(const json& list, size_t i, const char* what) {
  if (!list.is_array() || list.size() <= i || !list[i].is_number_integer()) {
    return InvalidArgument(std::string(what) + ": expected an integer list, got " + list.dump());
  }
  return list[i].get<int64_t>();
}

Result<ops::Workload> from_tvm_args(const ops::Template& tmpl, const json& args) {
  ops::Workload w;
  w.op = std::string(tmpl.op());
  if (!args.is_array()) return InvalidArgument("args must be a list");
  if (w.op == "dense" || w.op == "batch_matmul") {
    bool batched = w.op == "batch_matmul";
    size_t rank = batched ? 3 : 2;
    if (args.size() < 2) return InvalidArgument("too few args");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> a, tensor_dims(args[0], rank, "data"));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> b, tensor_dims(args[1], rank, "weight"));
    if (batched) w.params["B"] = a[0];
    w.params["M"] = a[rank - 2];
    w.params["K"] = a[rank - 1];
    w.params["N"] = b[rank - 2];
    if (!batched && args.size() > 2 && !args[2].is_null()) w.params["bias"] = 1;
    return w;
  }
  if (w.op == "conv2d" || w.op == "depthwise_conv2d") {
    if (args.size() < 5) return InvalidArgument("too few args");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> data, tensor_dims(args[0], 4, "data"));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, tensor_dims(args[1], 4, "kernel"));
    w.params["N"] = data[0];
    w.params["C"] = data[1];
    w.params["H"] = data[2];
    w.params["W"] = data[3];
    if (w.op == "conv2d") w.params["K"] = kernel[0];
    w.params["R"] = kernel[2];
    w.params["S"] = kernel[3];
    KILN_ASSIGN_OR_RETURN(w.params["stride_h"], int_at(args[2], 0, "strides"));
    KILN_ASSIGN_OR_RETURN(w.params["stride_w"], int_at(args[2], 1, "strides"));
    KILN_ASSIGN_OR_RETURN(w.params["pad_h"], int_at(args[3], 0, "padding"));
    KILN_ASSIGN_OR_RETURN(w.params["pad_w"], int_at(args[3], 1, "padding"));
    KILN_ASSIGN_OR_RETURN(w.params["dilation"], int_at(args[4], 0, "dilation"));
    return w;
  }
  return InvalidArgument("no mapping from TVM args for operator " + w.op);
}

}  // namespace

Result<const ops::Template*> template_for_task(std::string_view task_name) {
  if (const ops::Template* t = ops::find_template(task_name)) return t;
  std::string known;
  for (const ops::Template* t : ops::all_templates()) {
    known += (known.empty() ? "" : ", ") + std::string(t->name());
  }
  return InvalidArgument("unknown task name '" + std::string(task_name) +
                         "' (kiln's templates: " + known + ")");
}

Result<ops::Workload> normalized_workload(const ops::Template& tmpl, std::string_view workload) {
  KILN_ASSIGN_OR_RETURN(ops::Workload parsed, ops::Workload::parse(workload));
  if (parsed.op != tmpl.op()) {
    return InvalidArgument("workload '" + std::string(workload) + "' is not a " +
                           std::string(tmpl.op()) + " workload (task " + std::string(tmpl.name()) +
                           ")");
  }
  return tmpl.normalize(parsed);
}

Result<ops::Workload> workload_from_tvm_args(const ops::Template& tmpl, const json& args) {
  std::string where = std::string(tmpl.name()) + " args " + args.dump() + ": ";
  Result<ops::Workload> raw = from_tvm_args(tmpl, args);
  if (!raw.ok()) return Status::Error(raw.status().code(), where + raw.status().message());
  Result<ops::Workload> normalized = tmpl.normalize(*raw);
  if (!normalized.ok()) {
    return Status::Error(normalized.status().code(), where + normalized.status().message());
  }
  // nlohmann compares numbers by value across integer kinds, so [1, 1] == [1u, 1u].
  json back = tmpl.tvm_args(*normalized);
  if (back != args) {
    return InvalidArgument(where + "not a workload kiln can represent (the nearest, " +
                           normalized->to_string() + ", has args " + back.dump() + ")");
  }
  return normalized;
}

}  // namespace kiln::store
