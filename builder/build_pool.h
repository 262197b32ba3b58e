// A pool of builder worker processes (AutoTVM's LocalBuilder). Each worker instantiates and
// compiles configs in its own address space, so a config whose build crashes or hangs costs a
// worker, never the caller: a crash is COMPILE_HOST, a build over its timeout BUILD_TIMEOUT, and
// the worker is killed and replaced either way.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "builder/builder.h"
#include "builder/measure_input.h"
#include "common/env.h"
#include "common/worker_process.h"

namespace kiln::builder {

struct BuildPoolOptions {
  int n_parallel = 0;     // worker processes; 0 means one per core
  double timeout_s = 10;  // per config, as AutoTVM's LocalBuilder(timeout=10)
  Env* env = nullptr;     // clock, sleeping and worker processes; nullptr means Env::real()
};

// The body of "kiln build-worker": serves build requests as a forked builder worker does.
void serve_build_worker(int request_fd, int response_fd);

class LocalBuildPool : public Builder {
 public:
  explicit LocalBuildPool(BuildPoolOptions options = {});
  ~LocalBuildPool() override;

  // Builds every input (in parallel across the workers); result i belongs to input i. Never
  // fails as a whole. Workers start on first use, so templates registered before that (e.g.
  // by tests) are known to them. Templates are found by name in the workers.
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override;

  int n_parallel() const override { return n_parallel_; }

  // Workers started from now on are "BINARY build-worker" processes (fork + exec), as a process
  // with threads (kiln builder's gRPC server) must start them, instead of forks of this process.
  void exec_workers(std::string binary) { worker_binary_ = std::move(binary); }

  // start() queues the batch and hands inputs to idle workers; the workers compile in their own
  // processes while the caller does something else. Queued inputs reach workers as they free
  // up, whenever the caller is in start(), finish() or work_for().
  void start(const std::vector<MeasureInput>& inputs) override;
  std::vector<BuildResult> finish() override;
  void work_for(double seconds) override;
  // Stops (SIGSTOP) / continues (SIGCONT) the workers that are building; their build clocks
  // stand still meanwhile. finish() and work_for() resume a paused pool first.
  void pause() override;
  void resume() override;

  // Inputs started and not built yet (queued or building). 0 means finish() will only collect
  // results.
  int64_t unbuilt() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    uint64_t input;  // sequence number of the input
    Clock::time_point started;
    double paused_before_s;  // paused_seconds() when the job started
  };
  struct Queued {
    MeasureInput input;
    BuildResult result;
    bool done = false;
  };

  Result<WorkerProcess*> worker(size_t slot);
  Queued& queued(uint64_t input) { return queue_[input - base_]; }
  void dispatch();  // hands queued inputs to idle workers
  // Dispatches and handles replies and timeouts until `until_done()` holds or `deadline` passes.
  void serve_until(const std::function<bool()>& until_done, Clock::time_point deadline);
  bool oldest_batch_done() const;
  double paused_seconds() const;           // total time paused so far, the current pause included
  double elapsed_s(const Job& job) const;  // the job's build time, pauses excluded
  void fail(uint64_t input, MeasureError e, std::string message, double seconds);

  int n_parallel_;
  std::string worker_binary_;
  double timeout_s_;
  Env* env_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  // The inputs of every started batch not finished yet, oldest first; input n (a sequence number
  // over the pool's life) is queue_[n - base_].
  std::deque<Queued> queue_;
  std::deque<size_t> batch_sizes_;
  uint64_t base_ = 0;
  uint64_t next_ = 0;           // the next input to hand to a worker
  std::map<size_t, Job> busy_;  // worker slot -> job
  bool paused_ = false;
  Clock::time_point pause_started_;
  double paused_total_s_ = 0;
};

}  // namespace kiln::builder
