#include "cli/board_commands.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "cli/log_options.h"
#include "common/worker_process.h"
#include "runner/runner_service.h"

namespace kiln::cli {

void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

std::vector<std::string> resolve_exec_prefix(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty() || words[0].find('/') != std::string::npos) {
    if (!words.empty() && access(words[0].c_str(), X_OK) != 0) {
      throw CommandError{"--exec-prefix: '" + words[0] + "' is not an executable file"};
    }
    return words;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + words[0];
    if (access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) {
      words[0] = candidate;
      return words;
    }
  }
  throw CommandError{"--exec-prefix: '" + words[0] + "' is not found on PATH"};
}

Command add_runner_command(CLI::App& app, std::function<Target()> host_target) {
  auto o = std::make_shared<runner::RunnerServerOptions>();
  auto memory_mb = std::make_shared<double>(8192);
  auto log = std::make_shared<LogOptions>();
  o->service.max_cpu_s_per_config = 300;
  CLI::App* cmd = app.add_subcommand(
      "runner",
      "serve measurements for the farm: register with the tracker under a key and run the "
      "signed kernels clients send, each in a limited child process");
  cmd->add_option("--tracker", o->tracker, "the tracker's HOST:PORT")->required();
  cmd->add_option("--key", o->key, "device kind, e.g. znver5-2c ([A-Za-z0-9._-])")->required();
  cmd->add_option("--name", o->name, "this runner's unique name")->default_str("KEY-HOST-PID");
  cmd->add_option("--listen", o->listen,
                  "HOST:PORT of its Runner service (port 0: any free one); other than loopback "
                  "only with --certs or --insecure");
  cmd->add_option("--certs", o->auth.certs_dir,
                  "TLS with this kiln certs init directory (server and client certificates; its "
                  "token is the signing key)");
  cmd->add_option("--token-file", o->auth.token_file,
                  "bearer token for the tracker (with --certs); also the signing key");
  cmd->add_option("--signing-key", o->signing_key_file,
                  "the key artifacts are signed with (default: the token)");
  cmd->add_flag("--insecure", o->auth.insecure, "plaintext (a tracker started with --insecure)");
  add_bounded(cmd, "--max-memory-mb", memory_mb.get(), 0, 1 << 24,
              "address-space limit of each measurement child in MiB (0: none)");
  add_bounded(cmd, "--max-cpu-s", &o->service.max_cpu_s_per_config, 0, 86400,
              "CPU seconds per kernel thread a measurement child may use per config (0: no limit)");
  add_bounded(cmd, "--register-wait", &o->register_wait_s, 0, 86400,
              "seconds to keep trying to register with the tracker at start");
  cmd->add_option("--scratch", o->service.scratch_parent,
                  "directory under which each measurement child gets a private one")
      ->default_str("the temp directory");
  auto exec_prefix = std::make_shared<std::string>();
  cmd->add_option("--exec-prefix", *exec_prefix,
                  "run each measurement child under this command, e.g. 'qemu-aarch64-static' for "
                  "a runner itself started under that emulator");
  cmd->add_flag("--emulated", o->service.emulated,
                "this machine emulates the board: check every output, but run each config once "
                "and time nothing worth keeping (see README, Device farm)");
  add_log_options(cmd, log.get());
  return [o, memory_mb, exec_prefix, host_target, log] {
    start_log("kiln runner", *log);
    o->kiln_version = KILN_VERSION;
    if (host_target) o->target = host_target();
    o->service.exec_prefix = resolve_exec_prefix(*exec_prefix);
    o->service.max_memory_bytes = static_cast<uint64_t>(*memory_mb * 1024 * 1024);
    o->service.cores = std::max(1u, std::thread::hardware_concurrency());
    o->service.worker_binary = self_binary();
    block_stop_signals();
    ok_or_exit(runner::run_runner(*o));
    return 0;
  };
}

Command add_measure_worker_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("measure-worker",
                                     "(internal) a kiln runner's measurement child on fds 3 and 4");
  cmd->group("");  // hidden
  return [] {
    runner::serve_exec_worker(WorkerProcess::kExecRequestFd, WorkerProcess::kExecResponseFd);
    return 0;
  };
}

}  // namespace kiln::cli
