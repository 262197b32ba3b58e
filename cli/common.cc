#include "cli/common.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "common/duration.h"
#include "exchange/target_description.h"

namespace kiln::cli {

frontend::ImportOptions import_options(const std::vector<std::string>& input_shapes) {
  frontend::ImportOptions options;
  for (const std::string& text : input_shapes) {
    auto [name, dims] = value_or_exit(frontend::parse_input_shape(text));
    if (!options.input_shapes.emplace(name, dims).second) {
      throw CommandError{"--input-shape: '" + name + "' is given more than once"};
    }
  }
  return options;
}

double parse_duration(const std::string& option, const std::string& text) {
  return value_or_exit(kiln::parse_duration(option, text));
}

Target resolve_target(const std::string& text) {
  return value_or_exit(builder::parse_target(text));
}

void add_target_option(CLI::App* cmd, std::string* target, const std::string& help) {
  cmd->add_option("--target", *target, help);
}

void add_records_from_option(CLI::App* cmd, std::string* value) {
  cmd->add_option("--records-from", *value,
                  "exact: only records of this target; any-cpu: when it has none, those of "
                  "another CPU of the same architecture and vector ISA (as AutoTVM matches "
                  "targets by their keys)")
      ->default_str("exact");
}

std::string origin_note(const store::RecordOrigin& origin) {
  std::string parts;
  if (origin.other_target) parts = "records of " + origin.target;
  if (origin.threads_differ) {
    parts += (parts.empty() ? "" : ", ") + std::string("measured at ") +
             std::to_string(*origin.threads) + " threads";
  }
  return parts.empty() ? "" : " (" + parts + ")";
}

void add_task_options(CLI::App* cmd, TaskOptions* o, bool workload_required) {
  auto* w = cmd->add_option("--workload,-w", o->workload, "e.g. dense:M=1024,N=1024,K=1024");
  if (workload_required) w->required();
  cmd->add_option(
      "--template", o->template_name,
      "one template of the operator (default: its TVM templates; see `kiln templates`)");
  add_target_option(cmd, &o->target,
                    "e.g. 'llvm -mcpu=znver5' (default: llvm, the host's CPU and features)");
}

ResolvedTasks resolve_tasks(const TaskOptions& o) {
  ResolvedTasks out{resolve_target(o.target), {}};
  ops::Workload w = value_or_exit(ops::Workload::parse(o.workload));
  for (const ops::Template* t : value_or_exit(ops::resolve_templates(w, o.template_name))) {
    out.tasks.push_back({t, value_or_exit(t->normalize(w))});
  }
  return out;
}

const char* picked_label(std::optional<int64_t> index, bool fallback) {
  if (index) return "";
  return fallback ? "  (fallback)" : "  (default)";
}

ConfigEntity pick_config(const Task& task, const ConfigSpace& space, std::optional<int64_t> index,
                         const Target& target, bool fallback) {
  if (!index && fallback) {
    return task.tmpl->fallback(task.workload, space, describe(target).template_info());
  }
  if (!index) {
    return task.tmpl->default_config(task.workload, space, describe(target).template_info());
  }
  Result<ConfigEntity> c = space.checked_get(*index);
  if (!c.ok()) throw CommandError{std::string(task.tmpl->name()) + ": " + c.status().message()};
  if (!space.is_index_valid(*index)) {
    throw CommandError{std::string(task.tmpl->name()) + ": config " + std::to_string(*index) +
                       " is excluded by the space's filter"};
  }
  return *c;
}

}  // namespace kiln::cli
