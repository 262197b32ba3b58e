// A pool of builder worker processes (AutoTVM's LocalBuilder). Each worker instantiates and
// compiles configs in its own address space, so a config whose build crashes or hangs costs a
// worker, never the caller: a crash is COMPILE_HOST, a build over its timeout BUILD_TIMEOUT, and
// the worker is killed and replaced either way.
#pragma once

#include <memory>
#include <vector>

#include "builder/builder.h"
#include "builder/measure_input.h"
#include "common/worker_process.h"

namespace kiln::builder {

struct BuildPoolOptions {
  int n_parallel = 0;     // worker processes; 0 means one per core
  double timeout_s = 10;  // per config, as AutoTVM's LocalBuilder(timeout=10)
};

class LocalBuildPool : public Builder {
 public:
  explicit LocalBuildPool(BuildPoolOptions options = {});
  ~LocalBuildPool() override;

  // Builds every input (in parallel across the workers); result i belongs to input i. Never
  // fails as a whole. Workers start on first use, so templates registered before that (e.g.
  // by tests) are known to them. Templates are found by name in the workers.
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override;

  int n_parallel() const override { return n_parallel_; }

 private:
  Result<WorkerProcess*> worker(size_t slot);

  int n_parallel_;
  double timeout_s_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

}  // namespace kiln::builder
