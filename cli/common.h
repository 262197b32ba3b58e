// Shared pieces of the `kiln` subcommands: how a task is named on the command line, and how
// user errors become one line and exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "builder/target.h"
#include "common/status.h"
#include "ops/registry.h"

namespace kiln::cli {

constexpr int kUsageError = 2;

// Thrown for user errors; main prints "kiln: <message>" and exits with kUsageError.
struct UsageError {
  std::string message;
};

template <typename T>
T value_or_exit(Result<T> r) {
  if (!r.ok()) throw UsageError{r.status().message()};
  return std::move(r).value();
}

inline void ok_or_exit(const Status& s) {
  if (!s.ok()) throw UsageError{s.message()};
}

struct TaskOptions {
  std::string workload;
  std::string template_name;
  std::string target = "llvm";
};
void add_task_options(CLI::App* cmd, TaskOptions* o, bool workload_required = true);

struct Task {
  const ops::Template* tmpl;
  ops::Workload workload;  // normalized
};
// The tasks a workload (and optional --template) names; UsageError for bad input.
std::vector<Task> resolve_tasks(const TaskOptions& o);

// The config `index` of the task's space, or its fallback config; UsageError if out of range.
ConfigEntity pick_config(const Task& task, const ConfigSpace& space, std::optional<int64_t> index,
                         const builder::Target& target);

// Subcommands: each registers itself on `app` and returns the function that runs it.
using Command = std::function<int()>;
Command add_space_command(CLI::App& app);
Command add_show_command(CLI::App& app);
Command add_measure_command(CLI::App& app);
Command add_tune_command(CLI::App& app);
Command add_best_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_import_command(CLI::App& app);

}  // namespace kiln::cli
