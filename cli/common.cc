#include "cli/common.h"

namespace kiln::cli {

void add_task_options(CLI::App* cmd, TaskOptions* o, bool workload_required) {
  auto* w = cmd->add_option("--workload,-w", o->workload, "e.g. dense:M=1024,N=1024,K=1024");
  if (workload_required) w->required();
  cmd->add_option("--template", o->template_name,
                  "one template of the operator (default: all of them)");
  cmd->add_option("--target", o->target, "e.g. 'llvm -mcpu=znver5' (default: the host)");
}

std::vector<Task> resolve_tasks(const TaskOptions& o) {
  ops::Workload w = value_or_exit(ops::Workload::parse(o.workload));
  std::vector<Task> tasks;
  for (const ops::Template* t : value_or_exit(ops::resolve_templates(w, o.template_name))) {
    tasks.push_back({t, value_or_exit(t->normalize(w))});
  }
  return tasks;
}

ConfigEntity pick_config(const Task& task, const ConfigSpace& space, std::optional<int64_t> index,
                         const builder::Target& target) {
  if (!index) return task.tmpl->fallback(task.workload, space, {target.simd_lanes()});
  Result<ConfigEntity> c = space.checked_get(*index);
  if (!c.ok()) throw UsageError{std::string(task.tmpl->name()) + ": " + c.status().message()};
  if (!space.is_index_valid(*index)) {
    throw UsageError{std::string(task.tmpl->name()) + ": config " + std::to_string(*index) +
                     " is excluded by the space's filter"};
  }
  return *c;
}

}  // namespace kiln::cli
