// A pool of builder worker processes (AutoTVM's LocalBuilder). Each worker instantiates and
// compiles configs in its own address space, so a config whose build crashes or hangs costs a
// worker, never the caller: a crash is COMPILE_HOST, a build over its timeout BUILD_TIMEOUT, and
// the worker is killed and replaced either way.
#pragma once

#include <chrono>
#include <map>
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

  // start() hands each input to an idle worker (the rest in finish()); the workers compile in
  // their own processes while the caller does something else.
  void start(const std::vector<MeasureInput>& inputs) override;
  std::vector<BuildResult> finish() override;
  // Stops (SIGSTOP) / continues (SIGCONT) the workers that are building; their build clocks
  // stand still meanwhile. finish() resumes a paused pool before waiting.
  void pause() override;
  void resume() override;

 private:
  struct Job {
    size_t input;
    std::chrono::steady_clock::time_point started;
    double paused_before_s;  // paused_seconds() when the job started
  };

  Result<WorkerProcess*> worker(size_t slot);
  void dispatch();                         // hands pending inputs to idle workers
  double paused_seconds() const;           // total time paused so far, the current pause included
  double elapsed_s(const Job& job) const;  // the job's build time, pauses excluded
  void fail(size_t input, MeasureError e, std::string message, double seconds);

  int n_parallel_;
  double timeout_s_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  // The batch in flight.
  std::vector<MeasureInput> inputs_;
  std::vector<BuildResult> results_;
  std::map<size_t, Job> busy_;  // worker slot -> job
  size_t next_ = 0, done_ = 0;
  bool paused_ = false;
  std::chrono::steady_clock::time_point pause_started_;
  double paused_total_s_ = 0;
};

}  // namespace kiln::builder
