// The Builder contract (DESIGN.md): build(batch of MeasureInput) -> batch of BuildResult, never
// throwing for a bad config. Implementations: LocalBuildPool (builder/build_pool.h: worker
// processes on this machine) and RemoteBuilder (builder/remote_builder.h: `kiln builder`
// servers over gRPC, in kiln_builder_farm).
#pragma once

#include <chrono>
#include <deque>
#include <thread>
#include <vector>

#include "exchange/build_result.h"
#include "exchange/measure_input.h"

namespace kiln::builder {

class Builder {
 public:
  virtual ~Builder() = default;
  // Result i belongs to input i.
  virtual std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) = 0;
  // Configs built at once: the tuning loop's batch size (AutoTVM's n_parallel).
  virtual int n_parallel() const = 0;

  // The same work split in two, so that batches can build while earlier ones are measured:
  // start() queues a batch and returns; finish() waits for the oldest started batch that is not
  // finished yet and returns its results (result i belongs to input i of that batch). Several
  // batches may be started before the first is finished; they build in order. REQUIRES: finish()
  // only with a started batch. This default builds synchronously in start().
  virtual void start(const std::vector<MeasureInput>& inputs) { started_.push_back(build(inputs)); }
  virtual std::vector<BuildResult> finish() {
    std::vector<BuildResult> oldest = std::move(started_.front());
    started_.pop_front();
    return oldest;
  }
  // The caller has nothing to do for `seconds` (e.g. a runner's cooldown): lets the started
  // batches progress meanwhile and returns after about that long. The default just sleeps.
  virtual void work_for(double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }

  // pause() stops the builder's use of this machine's cores until resume(), e.g. while a kernel
  // is timed on them; time paused does not count toward build timeouts. No-ops by default.
  virtual void pause() {}
  virtual void resume() {}

 private:
  std::deque<std::vector<BuildResult>> started_;
};

}  // namespace kiln::builder
