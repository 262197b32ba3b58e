// The Runner contract (DESIGN.md): run(batch of MeasureInput, BuildResult) -> batch of
// MeasureResult, never throwing; a crashing or hanging kernel kills a child process, never the
// caller. Implementations: LocalRunner (runner/local_runner.h: a supervised child process on this
// machine) and RemoteRunner (runner/remote_runner.h: runners leased from a farm's tracker);
// daemon/farm_watch.h wraps either to stop a job whose farm is gone.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/env.h"
#include "exchange/build_result.h"
#include "exchange/measure_input.h"
#include "exchange/measure_result.h"

namespace kiln::runner {

class Runner {
 public:
  virtual ~Runner() = default;
  // Result i belongs to input i; inputs whose build failed get their build error.
  virtual std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                         const std::vector<BuildResult>& builds) = 0;

  // A hint that configs of `input`'s task will run soon: the runner may get ready for them (e.g.
  // compute the task's reference outputs) while the caller does something else, such as
  // building the first batch. No-op by default.
  virtual void prepare(const MeasureInput& input) { (void)input; }

  // Seconds this runner has spent in cooldowns between measurements so far (part of run()'s wall
  // time), or nullopt when it cannot tell (its cooldowns happen on another machine).
  virtual std::optional<double> cooldown_seconds() const { return std::nullopt; }

  // Why this runner cannot measure any more, as of its latest run() (a farm whose tracker cannot
  // be reached or refuses this client: every later batch would be lost too); empty while it
  // can. The configs it could not measure are results with runner_lost.
  virtual std::string lost() const { return {}; }

  // What a runner that executes kernels on this machine's cores lets the caller do around them,
  // so that the caller's other work (the next batches' builds) stays off those cores while a
  // kernel runs and uses the runner's idle time instead.
  struct Hooks {
    std::function<void()> before_kernel;  // right before a kernel is checked and timed
    std::function<void()> after_kernel;   // right after it, whatever happened to the kernel
    // Called instead of sleeping through a cooldown of `seconds`; returns after about that long.
    std::function<void(double seconds)> idle;
  };
  void set_hooks(Hooks hooks) { hooks_ = std::move(hooks); }

 protected:
  // The clock and sleep the runner's cooldowns use, and its worker processes.
  explicit Runner(Env* env = nullptr) : env_(env ? env : &Env::real()) {}
  Env& env() const { return *env_; }
  void before_kernel() const {
    if (hooks_.before_kernel) hooks_.before_kernel();
  }
  void after_kernel() const {
    if (hooks_.after_kernel) hooks_.after_kernel();
  }
  void idle(double seconds) const {
    if (hooks_.idle) {
      hooks_.idle(seconds);
    } else {
      env_->sleep_for(seconds);
    }
  }

 private:
  Env* env_;
  Hooks hooks_;
};

}  // namespace kiln::runner
