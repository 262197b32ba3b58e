// The Runner contract (DESIGN.md): run(batch of MeasureInput, BuildResult) -> batch of
// MeasureResult, never throwing; a crashing or hanging kernel kills a child process, never the
// caller. Implementations: LocalRunner (a supervised child process).
#pragma once

#include <functional>
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

  // Hooks a runner that executes kernels on this machine's cores calls right before and right
  // after each kernel run, so that the caller can keep its other work (the next batch's builds)
  // off those cores meanwhile. `after` is called whatever happened to the kernel. Empty
  // functions clear them.
  void set_kernel_hooks(std::function<void()> before, std::function<void()> after) {
    before_kernel_ = std::move(before);
    after_kernel_ = std::move(after);
  }

 protected:
  void before_kernel() const {
    if (before_kernel_) before_kernel_();
  }
  void after_kernel() const {
    if (after_kernel_) after_kernel_();
  }

 private:
  std::function<void()> before_kernel_, after_kernel_;
};

}  // namespace kiln::runner
