// Concurrent jobs of one daemon take turns on the machine a tuning round at a time. A kernel
// timed while another job builds, fits its cost model or runs its own kernel on the same cores
// measures the contention, not the config; so a job holds the MeasureGate for a whole round
// (builds, measurements, model fits: tuner::ModelTuneEvents' before_round / after_round), and
// nothing of another job runs meanwhile. Among the waiters the highest priority goes next, then
// the earliest; a waiter whose job is stopped (cancel, pause, preemption, drain) gives up.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <stop_token>
#include <utility>

namespace kiln::daemon {

class MeasureGate {
 public:
  // Blocks until the caller holds the gate (true), or `stop` is requested first (false: the
  // caller does not hold it).
  bool acquire(int64_t priority, std::stop_token stop = {});
  // REQUIRES: the caller holds the gate.
  void release();

  // Who waits for the gate and whether it is held now (the dashboard's /metrics).
  struct Load {
    int64_t waiting = 0;
    bool held = false;
  };
  Load load();

 private:
  std::mutex mu_;
  std::condition_variable_any cv_;
  bool held_ = false;
  uint64_t next_ticket_ = 0;
  std::set<std::pair<int64_t, uint64_t>> waiting_;  // (-priority, ticket): first goes next
};

}  // namespace kiln::daemon
