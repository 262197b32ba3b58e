// AutoTVM's LocalRunner, isolated: built kernels run in a supervised child process, one config
// at a time, with a time limit. A kernel that crashes is RUNTIME_DEVICE, one that runs past the
// limit RUN_TIMEOUT, one whose output differs from the reference WRONG_ANSWER (checked before
// any timing counts); the child is replaced after a crash or timeout and the runner itself
// never dies.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/worker_process.h"
#include "exchange/build_result.h"
#include "exchange/measure_input.h"
#include "exchange/measure_result.h"
#include "runner/local_measure.h"
#include "runner/runner.h"

namespace kiln::runner {

struct RunnerOptions {
  MeasureOptions measure;  // number=4, repeat=3, min_repeat_ms=0, no cache flush
  double timeout_s = 10;   // per config, as AutoTVM's LocalRunner(timeout=10)
  // Idle time after each measured config (AutoTVM's default); see Runner::Hooks::idle.
  double cooldown_interval_s = 0.1;
  // Threads of the kernels' parallel loops; 0 means one per hardware thread, as TVM's runtime
  // runs AutoTVM's measurements on all cores.
  int threads = 0;
  int resolved_threads() const;
  // How the runner process starts. Empty: fork of this process (Env::spawn_worker). A path (the
  // kiln binary): fork + exec of "BINARY measure-worker", which a process with threads (the
  // gRPC runner service) must use; the limits below then apply to that child.
  std::string worker_binary;
  // Words exec'd before "BINARY measure-worker" (an emulator: a runner started under
  // qemu-aarch64-static cannot exec an aarch64 binary without it, when no binfmt handler is
  // registered); the first is a path.
  std::vector<std::string> exec_prefix;
  uint64_t max_memory_bytes = 0;  // the child's RLIMIT_AS; 0: none
  // RLIMIT_CPU soft limit renewed for each config: this many CPU seconds per kernel thread
  // (SIGXCPU past it: RUNTIME_DEVICE); computing a reference gets the prepare limit. 0: none.
  double max_cpu_s_per_config = 0;
  std::string scratch_parent;  // the child works in a fresh private directory under it
  Env* env = nullptr;  // clock, cooldown sleeps and the runner process; nullptr: Env::real()
};

// The body of "kiln measure-worker": reads the RunnerOptions frame the parent sends first on
// `request_fd`, then serves measurement requests as a forked runner process does.
void serve_exec_worker(int request_fd, int response_fd);

class LocalRunner : public Runner {
 public:
  explicit LocalRunner(RunnerOptions options = {});
  ~LocalRunner() override;

  // Measures every input whose build succeeded; inputs whose build failed get that build
  // error. Result i belongs to input i. Never fails as a whole.
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                 const std::vector<BuildResult>& builds) override;

  // Has the runner process compute the task's reference data now, without waiting for it.
  void prepare(const MeasureInput& input) override;

  const RunnerOptions& options() const { return options_; }
  // Seconds spent in cooldowns so far (the nominal cooldown interval per cooldown).
  std::optional<double> cooldown_seconds() const override { return cooldown_seconds_; }

 private:
  MeasureResult run_one(const MeasureInput& input, const BuildResult& build);
  Status start_worker();
  Status send_prepare(const MeasureInput& input);
  // Waits until the worker holds the task's reference data (asking for it if needed).
  Status await_prepared(const MeasureInput& input);
  void restart_worker();

  RunnerOptions options_;
  std::unique_ptr<WorkerProcess> worker_;
  std::set<std::string> prepared_;  // tasks whose reference data the current worker holds
  std::string preparing_;           // the task whose reference the worker is computing, if any
  double cooldown_seconds_ = 0;
};

}  // namespace kiln::runner
