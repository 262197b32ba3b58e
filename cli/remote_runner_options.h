// kiln tune's farm options: --tracker ADDR --key K [--certs DIR | --token-file F |
// --insecure] [--signing-key F] measure on the farm's runners (runner/remote_runner.h) instead
// of the local runner.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "builder/builder.h"
#include "cli/common.h"
#include "runner/local_runner.h"
#include "runner/runner.h"

namespace kiln::cli {

struct RemoteRunnerCliOptions {
  std::string tracker;
  std::string key;
  std::string certs_dir;
  std::string token_file;
  std::string signing_key_file;
  bool insecure = false;
  double wait_s = 60;
  int chunk = 4;                      // configs per Measure call
  std::vector<std::string> builders;  // HOST:PORT of `kiln builder`s; empty: local builds
};

void add_remote_runner_options(CLI::App* cmd, RemoteRunnerCliOptions* o);

// The farm's RemoteRunner when --tracker was given, else a LocalRunner with `local`. Bad
// options end the command (exit code 2) with one line naming the option.
std::unique_ptr<runner::Runner> make_runner(const RemoteRunnerCliOptions& o,
                                            const runner::RunnerOptions& local);

// RemoteBuilder over --builders when given (with the farm's --certs/--token-file/--insecure),
// else the local build pool. n_parallel 0: one per core locally, 8 per batch remotely.
std::unique_ptr<builder::Builder> make_builder(const RemoteRunnerCliOptions& o, int n_parallel,
                                               double timeout_s);

// Seconds the runner spent in cooldowns on this machine (0 for a remote runner).
double cooldown_seconds(const runner::Runner& r);

}  // namespace kiln::cli
