// The Builder contract (DESIGN.md): build(batch of MeasureInput) -> batch of BuildResult, never
// throwing for a bad config. Implementations: LocalBuildPool (worker processes).
#pragma once

#include <vector>

#include "builder/measure_input.h"

namespace kiln::builder {

class Builder {
 public:
  virtual ~Builder() = default;
  // Result i belongs to input i.
  virtual std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) = 0;
  // Configs built at once: the tuning loop's batch size (AutoTVM's n_parallel).
  virtual int n_parallel() const = 0;

  // The same work split in two, so that a batch can build while the previous one is measured:
  // start() hands the batch over and returns, finish() waits for its results (result i belongs
  // to input i). REQUIRES: at most one batch between start() and finish(). This default builds
  // synchronously in start().
  virtual void start(const std::vector<MeasureInput>& inputs) { started_ = build(inputs); }
  virtual std::vector<BuildResult> finish() { return std::move(started_); }

  // pause() stops the builder's use of this machine's cores until resume(), e.g. while a kernel
  // is timed on them; time paused does not count toward build timeouts. No-ops by default.
  virtual void pause() {}
  virtual void resume() {}

 private:
  std::vector<BuildResult> started_;
};

}  // namespace kiln::builder
