// An Env for tests whose clock runs with real time plus an offset the test moves forward:
// advance(s) makes s seconds pass at once, and sleep_for advances instead of sleeping. Worker
// processes are real unless fail_spawns() is set.
#pragma once

#include <atomic>
#include <string>

#include "common/env.h"

namespace kiln::testing {

class WarpEnv final : public Env {
 public:
  Clock::time_point now() override {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(offset_s_.load()));
  }
  void sleep_for(double seconds) override {
    if (seconds > 0) advance(seconds);
  }
  Result<std::unique_ptr<WorkerProcess>> spawn_worker(
      const std::function<void(int, int)>& serve) override {
    ++spawned_;
    if (!spawn_error_.empty()) return IoError(spawn_error_);
    return Env::real().spawn_worker(serve);
  }

  void advance(double seconds) { offset_s_ = offset_s_.load() + seconds; }
  double advanced_s() const { return offset_s_.load(); }
  // Every later spawn fails with `why` (empty: spawns work again).
  void fail_spawns(std::string why) { spawn_error_ = std::move(why); }
  int spawned() const { return spawned_; }

 private:
  std::atomic<double> offset_s_{0};
  std::string spawn_error_;
  int spawned_ = 0;
};

}  // namespace kiln::testing
