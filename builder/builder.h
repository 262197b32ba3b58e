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
};

}  // namespace kiln::builder
