// The log options of kiln's servers (serve, tracker, runner, builder) and of kiln tune:
// --log-level LEVEL, -v/--verbose (debug) and -q/--quiet (warnings and errors only). Shared by
// kiln and the lean kiln-runner.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace kiln::cli {

struct LogOptions {
  std::string level = "info";
  bool verbose = false;
  bool quiet = false;
};

// Adds the three options to `cmd` (-v and -q exclude each other and --log-level).
void add_log_options(CLI::App* cmd, LogOptions* o);

// Starts the log of `program` (common/log.h) at the level `o` names and routes gRPC's log into
// it (farm/grpc_log.h), failed handshakes as warnings. A CommandError (usage) for an unknown
// level. Every other command logs as run_command_line set it up (cli/base.h).
void start_log(const std::string& program, const LogOptions& o);

}  // namespace kiln::cli
