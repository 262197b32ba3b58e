// The machine's clock, sleeping and process creation behind one interface (leveldb's Env), so
// that what depends on them — build timeouts and pauses, the runner's cooldown, worker
// processes — can be tested without waiting on the wall clock: a test passes an Env whose clock
// it moves forward (tests/warp_env.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "common/status.h"
#include "common/worker_process.h"

namespace kiln {

class Env {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Env() = default;

  // Monotonic time.
  virtual Clock::time_point now() = 0;
  // Returns after `seconds` (<= 0: at once) of this Env's time.
  virtual void sleep_for(double seconds) = 0;
  // WorkerProcess::spawn, or whatever stands in for it.
  virtual Result<std::unique_ptr<WorkerProcess>> spawn_worker(
      const std::function<void(int request_fd, int response_fd)>& serve) = 0;

  // The real one: steady_clock, this_thread::sleep_for, fork. Shared by the whole process.
  static Env& real();
};

// Seconds between two time points.
inline double seconds_between(Env::Clock::time_point from, Env::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// A time point `seconds` after `t`, saturating instead of overflowing.
Env::Clock::time_point time_after(Env::Clock::time_point t, double seconds);

}  // namespace kiln
