// What every kiln command line shares, the lean kiln-runner's included (no LLVM, no builder):
// the exit codes, how an error becomes one line and an exit code, and numeric options with
// kiln's bounds and messages.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

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

// main() of kiln and kiln-runner: parses argv with `app` and runs the one of `commands` that was
// parsed, with kiln's log (common/log.h) at the info level for `program` and gRPC's routed into it
// (failed handshakes at debug: the command's error says which certificate was refused); servers
// start their own (cli/log_options.h). A parse error is CLI11's message and exit code 2 (0 for
// --help); a CommandError is "PROGRAM: message" on stderr and its exit code.
int run_command_line(CLI::App& app, const std::vector<std::pair<CLI::App*, Command>>& commands,
                     int argc, char** argv, const char* program);

}  // namespace kiln::cli
