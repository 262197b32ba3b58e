#include "store/formats/tvm_args.h"

#include <string>

#include "ops/registry.h"

namespace kiln::store {

namespace {

using nlohmann::json;

// TVM args -> kiln workload parameters, by the template's operator (Operator::from_tvm_args, the
// inverse of each template's tvm_args()); workload_from_tvm_args checks the round trip, so an
// arg list this mapping reads wrongly is rejected rather than imported as another workload.
Result<ops::Workload> from_tvm_args(const ops::Template& tmpl, const json& args) {
  if (!args.is_array()) return InvalidArgument("args must be a list");
  const ops::Operator* op = ops::find_operator(tmpl.op());
  if (!op)
    return InvalidArgument("no mapping from TVM args for operator " + std::string(tmpl.op()));
  return op->from_tvm_args(args);
}

// Whether `theirs` names the task of `ours` (the args this kiln writes): equal, or with a tensor
// where ours is None, as an older kiln wrote dense's bias where TVM writes None.
bool same_task_args(const json& ours, const json& theirs) {
  if (ours == theirs) return true;
  if (!theirs.is_array() || ours.size() != theirs.size()) return false;
  for (size_t i = 0; i < ours.size(); ++i) {
    const bool old_tensor =
        ours[i].is_null() && theirs[i].is_array() && !theirs[i].empty() && theirs[i][0] == "TENSOR";
    if (ours[i] != theirs[i] && !old_tensor) return false;
  }
  return true;
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
  if (!same_task_args(back, args)) {
    return InvalidArgument(where + "not a workload kiln can represent (the nearest, " +
                           normalized->to_string() + ", has args " + back.dump() + ")");
  }
  return normalized;
}

}  // namespace kiln::store
