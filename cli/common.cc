#include "cli/common.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "common/duration.h"
#include "exchange/target_description.h"

namespace kiln::cli {

int exit_code_for(StatusCode code) {
  switch (code) {
    case StatusCode::kIo:
      return kIoError;
    case StatusCode::kInternal:
      return kInternalError;
    default:
      return kUsageError;
  }
}

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

namespace {

std::string format_bound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A CLI11 validator (it sees the text before conversion) with kiln's message.
CLI::Validator real_range(double min, double max, bool min_exclusive) {
  std::string range =
      std::string(min_exclusive ? "(" : "[") + format_bound(min) + ", " + format_bound(max) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        double v = std::strtod(begin, &end);
        bool ok = end != begin && *end == '\0' && errno == 0 && std::isfinite(v) &&
                  (min_exclusive ? v > min : v >= min) && v <= max;
        return ok ? "" : "expected a finite number in " + range + ", got '" + text + "'";
      },
      "NUMBER in " + range);
}

CLI::Validator integer_range(int64_t min, int64_t max) {
  std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(begin, &end, 10);
        bool ok = end != begin && *end == '\0' && errno == 0 && v >= min && v <= max;
        return ok ? "" : "expected an integer in " + range + ", got '" + text + "'";
      },
      "INT in " + range);
}

}  // namespace

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, double* value, double min,
                         double max, const std::string& help, bool min_exclusive) {
  return cmd->add_option(name, *value, help)
      ->check(real_range(min, max, min_exclusive))
      ->capture_default_str();
}

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, int* value, int64_t min,
                         int64_t max, const std::string& help) {
  return cmd->add_option(name, *value, help)->check(integer_range(min, max))->capture_default_str();
}

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, int64_t* value, int64_t min,
                         int64_t max, const std::string& help) {
  return cmd->add_option(name, *value, help)->check(integer_range(min, max))->capture_default_str();
}

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, std::optional<int64_t>* value,
                         int64_t min, int64_t max, const std::string& help) {
  return cmd->add_option(name, *value, help)->check(integer_range(min, max));
}

int max_n_parallel() {
  unsigned cores = std::thread::hardware_concurrency();
  return 4 * static_cast<int>(cores == 0 ? 1 : cores);
}

std::string self_binary() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw CommandError{"cannot find the kiln binary (/proc/self/exe)"};
  return std::string(self, n);
}

}  // namespace kiln::cli
