// Shared pieces of the `kiln` subcommands: how a task and its target are named on the command
// line, how numeric options are bounded, and how errors become one line and an exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "builder/target.h"
#include "common/status.h"
#include "frontend/onnx_import.h"
#include "ops/registry.h"

namespace kiln::cli {

// Exit codes of `kiln`.
constexpr int kFailed = 1;          // the command ran, but what it did failed (e.g. a config)
constexpr int kUsageError = 2;      // bad input: an option, a workload, a file's contents
constexpr int kInternalError = 70;  // a bug in kiln (EX_SOFTWARE)
constexpr int kIoError = 74;        // a file or process operation failed (EX_IOERR)
constexpr int kInterrupted = 130;   // stopped by SIGINT/SIGTERM (128 + SIGINT)

// The exit code for a failed Status: I/O and internal errors have their own; the rest is bad
// input.
int exit_code_for(StatusCode code);

// Thrown by commands; main prints "kiln: <message>" and exits with `exit_code`.
struct CommandError {
  std::string message;
  int exit_code = kUsageError;
};

template <typename T>
T value_or_exit(Result<T> r) {
  if (!r.ok()) throw CommandError{r.status().message(), exit_code_for(r.status().code())};
  return std::move(r).value();
}

inline void ok_or_exit(const Status& s) {
  if (!s.ok()) throw CommandError{s.message(), exit_code_for(s.code())};
}

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

// Numeric options with kiln's own bounds and messages ("--timeout: expected a number of
// seconds in (0, 3600], got 'nan'"): the value must parse completely, be finite and lie in
// [min, max] (min excluded when `min_exclusive`). The default is shown in --help.
CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, double* value, double min,
                         double max, const std::string& help, bool min_exclusive = false);
CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, int* value, int64_t min,
                         int64_t max, const std::string& help);
CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, int64_t* value, int64_t min,
                         int64_t max, const std::string& help);
CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, std::optional<int64_t>* value,
                         int64_t min, int64_t max, const std::string& help);

// Builder processes allowed for --n-parallel: 1 .. 4 x the machine's cores.
int max_n_parallel();

// The path of this kiln binary (/proc/self/exe), which servers exec for their worker and
// measurement children; a CommandError if it cannot be read.
std::string self_binary();

// Subcommands: each registers itself on `app` and returns the function that runs it.
using Command = std::function<int()>;
Command add_space_command(CLI::App& app);
Command add_compile_command(CLI::App& app);
Command add_show_command(CLI::App& app);
Command add_measure_command(CLI::App& app);
Command add_tune_command(CLI::App& app);
Command add_best_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_import_command(CLI::App& app);
Command add_templates_command(CLI::App& app);
Command add_tasks_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_report_command(CLI::App& app);

}  // namespace kiln::cli
