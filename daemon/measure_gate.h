// Local measurements of concurrent jobs must never overlap: a kernel timed while another job's
// kernel runs on the same cores measures the contention, not the config. A MeasureGate lets one
// holder at a time through; among the waiters the highest priority goes first, then the earliest.
// A GatedRunner is a job's runner that holds the gate for every batch it measures and every
// reference it prepares.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

#include "runner/runner.h"

namespace kiln::daemon {

class MeasureGate {
 public:
  // Blocks until the caller holds the gate.
  void acquire(int64_t priority);
  void release();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  uint64_t next_ticket_ = 0;
  std::set<std::pair<int64_t, uint64_t>> waiting_;  // (-priority, ticket): first goes next
};

class GatedRunner : public runner::Runner {
 public:
  // `inner` and `gate` must outlive this runner. The hooks given to this runner (the tuning loop
  // pauses its builders while kernels run) are passed on to `inner`.
  GatedRunner(runner::Runner& inner, MeasureGate& gate, int64_t priority);

  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                 const std::vector<BuildResult>& builds) override;
  void prepare(const MeasureInput& input) override;

 private:
  runner::Runner& inner_;
  MeasureGate& gate_;
  int64_t priority_;
};

}  // namespace kiln::daemon
