// The Runner contract (DESIGN.md): run(batch of MeasureInput, BuildResult) -> batch of
// MeasureResult, never throwing; a crashing or hanging kernel kills a child process, never the
// caller. Implementations: LocalRunner (a supervised child process).
#pragma once

#include <vector>

#include "builder/measure_input.h"
#include "runner/local_measure.h"

namespace kiln::runner {

class Runner {
 public:
  virtual ~Runner() = default;
  // Result i belongs to input i; inputs whose build failed get their build error.
  virtual std::vector<MeasureResult> run(const std::vector<builder::MeasureInput>& inputs,
                                         const std::vector<builder::BuildResult>& builds) = 0;
};

}  // namespace kiln::runner
