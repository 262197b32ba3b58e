// `kiln-runner`: the board's binary. It links neither LLVM nor the builder (a board builds
// nothing), so it cross-builds for aarch64 (cmake --preset aarch64-runner) and stays small: the
// farm's runner with its measurement child, and `run` / `bench` of a compiled model. Options
// and exit codes are those of the same `kiln` subcommands (cli/board_commands.h).
#include <cstdio>

#include "cli/board_commands.h"

int main(int argc, char** argv) {
  using namespace kiln::cli;
  CLI::App app{
      "kiln-runner: a board's kiln (the farm's runner; run and bench of a compiled model)"};
  app.set_version_flag("--version", std::string("kiln-runner ") + KILN_VERSION);
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Command>> commands;
  auto add = [&](Command c) {
    commands.emplace_back(app.get_subcommands({}).back(), std::move(c));
  };
  // No host target function: the runner detects its machine without LLVM.
  add(add_runner_command(app, nullptr));
  add(add_measure_worker_command(app));
  add(add_run_command(app));
  add(add_bench_command(app));
  return run_command_line(app, commands, argc, argv, "kiln-runner");
}
