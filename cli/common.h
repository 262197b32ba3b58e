// Shared pieces of the `kiln` subcommands: how a task and its target are named on the command
// line, how numeric options are bounded, and how errors become one line and an exit code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "builder/target.h"
#include "cli/base.h"
#include "cli/board_commands.h"
#include "common/status.h"
#include "frontend/onnx_import.h"
#include "ops/registry.h"
#include "store/record_selection.h"

namespace kiln::cli {

// The one way a command turns --target into a Target: parsed and validated against what this
// kiln's LLVM can generate code for (builder::parse_target), or a CommandError.
Target resolve_target(const std::string& text);

struct TaskOptions {
  std::string workload;
  std::string template_name;
  std::string target = "llvm";
};
void add_task_options(CLI::App* cmd, TaskOptions* o, bool workload_required = true);
// --target alone, for commands without a workload.
void add_target_option(CLI::App* cmd, std::string* target, const std::string& help);

// --records-from exact|any-cpu (store/record_selection.h; the value is checked by the command
// with store::parse_records_from).
void add_records_from_option(CLI::App* cmd, std::string* value);
// " (records of T, N threads)" for a kernel whose records came from another CPU or thread count,
// else "".
std::string origin_note(const store::RecordOrigin& origin);

struct Task {
  const ops::Template* tmpl;
  ops::Workload workload;  // normalized
};
// What a command's task options name: the target and the tasks of the workload (one per
// template, or the one --template names). CommandError for bad input.
struct ResolvedTasks {
  Target target;
  std::vector<Task> tasks;
};
ResolvedTasks resolve_tasks(const TaskOptions& o);

// The config `index` of the task's space, else kiln's default config for the target (AutoTVM's
// fallback config with `fallback`); CommandError if out of range.
ConfigEntity pick_config(const Task& task, const ConfigSpace& space, std::optional<int64_t> index,
                         const Target& target, bool fallback = false);
// How pick_config chose: "" for an index, else "  (default)" or "  (fallback)".
const char* picked_label(std::optional<int64_t> index, bool fallback);

// --input-shape NAME=DIMS, repeated, as ONNX import options; CommandError for a malformed one or
// a name given twice.
frontend::ImportOptions import_options(const std::vector<std::string>& input_shapes);

// "8h", "30m", "90s", "1h30m" or a plain number of seconds -> seconds; CommandError naming
// `option` otherwise.
double parse_duration(const std::string& option, const std::string& text);

// Subcommands: each registers itself on `app` and returns the function that runs it.
Command add_space_command(CLI::App& app);
Command add_compile_command(CLI::App& app);
Command add_show_command(CLI::App& app);
Command add_measure_command(CLI::App& app);
Command add_tune_command(CLI::App& app);
Command add_best_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_import_command(CLI::App& app);
Command add_store_command(CLI::App& app);
Command add_templates_command(CLI::App& app);
Command add_tasks_command(CLI::App& app);
Command add_report_command(CLI::App& app);

}  // namespace kiln::cli
