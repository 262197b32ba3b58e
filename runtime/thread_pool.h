// The thread pool that generated kernels call through KilnRuntimeApi::parallel_for.
//
// Kernels are timed on small shared machines (2 cores), so the pool is built around two
// constraints: dispatch must be cheap enough that a parallel loop of a few microseconds still
// pays off, and an idle pool must not burn a core that the measurement needs. Workers therefore
// spin for a short, bounded time after each chunk (catching back-to-back loops of one kernel)
// and then block in the kernel on a futex until the next dispatch.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"
#include "runtime/kernel_abi.h"

namespace kiln {

class ThreadPool {
 public:
  // Starts num_threads - 1 worker threads; the thread calling parallel_for is the remaining one.
  // With num_threads == 1 no thread is started and every loop runs on the caller.
  // Values below 1 are treated as 1. Never throws: when the system refuses a thread (its limit
  // on threads or memory), the pool runs with those it could start, and start_status() says why.
  explicit ThreadPool(int num_threads);
  // Stops and joins the workers. REQUIRES: no parallel_for is in flight.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads taking part in a parallel_for, the caller included.
  int num_threads() const { return num_threads_.load(std::memory_order_relaxed); }
  // Stops the workers and starts num_threads - 1 new ones (values below 1 mean 1), as the
  // constructor does. Waits for a parallel_for running on another thread to finish.
  // REQUIRES: not called from inside a body.
  void set_num_threads(int num_threads);
  // kOk when the last start (constructor or set_num_threads) got every thread it asked for;
  // else kRuntime naming how many it asked for and why the system refused one.
  // REQUIRES: not called concurrently with set_num_threads.
  Status start_status() const;

  // Runs body over [0, n): with T = min(n, num_threads()), the range is split into min(n, 4 T)
  // contiguous chunks of near-equal size (sizes differ by at most one, earlier chunks larger; one
  // chunk, [0, n), when T is 1). The caller runs chunk 0; then the caller and the workers each
  // claim the next unclaimed chunk until none is left, so a thread slowed down by another
  // process on its core does less of the loop instead of holding it up. Returns when every
  // chunk is done: a worker that has not woken up by then (its core taken by another process)
  // is not waited for, and takes no part. n <= 0 does nothing.
  //
  // A parallel_for issued from inside a body (of this or any other pool) runs the whole range
  // serially on the calling thread, so nesting never deadlocks. Calls from several outside
  // threads at once are serialized. Safe to use in a child after fork(): the child replaces the
  // workers it did not inherit on its first call.
  void parallel_for(int64_t n, kiln_parallel_body body, void* closure);

  // An API table for generated code whose parallel_for calls this pool. Valid for the lifetime
  // of the pool.
  const KilnRuntimeApi* api() const { return &api_; }

 private:
  // The loop being dispatched. Written by the dispatcher only between dispatches; a worker reads
  // the fields and then validates them by claiming a chunk of the same generation (a seqlock
  // whose sequence is the generation half of `claim`).
  struct alignas(64) Job {
    std::atomic<kiln_parallel_body> body{nullptr};
    std::atomic<void*> closure{nullptr};
    std::atomic<int64_t> n{0};       // the loop's range [0, n)
    std::atomic<int64_t> chunks{0};  // split into this many chunks (ChunkBounds)
    // (generation << 32) | the next unclaimed chunk. Tagging the claim with the dispatch's
    // generation keeps a worker that woke late from claiming a chunk of a later dispatch
    // with the fields of an earlier one.
    std::atomic<uint64_t> claim{0};
  };

  void StartWorkers(int num_threads);
  void StopWorkers();
  bool ForkedSinceStart() const;
  void RecoverAfterFork();
  // Runs the dispatches after generation `seen`, until stop_.
  void WorkerLoop(uint32_t seen);
  // Claims chunks of dispatch `generation` and runs them until none is left (or a later
  // dispatch has begun). Counts each finished chunk in done_; returns whether this thread
  // finished the dispatch's last chunk.
  bool RunChunks(uint32_t generation);

  std::atomic<int> num_threads_{1};
  KilnRuntimeApi api_;
  // Serializes dispatches from different outside threads; also guards set_num_threads.
  std::mutex dispatch_mu_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
  Job job_;
  // The current dispatch's number; bumped to start one. Workers poll it (and sleep on it).
  alignas(64) std::atomic<uint32_t> generation_{0};
  std::atomic<uint32_t> workers_sleeping_{0};
  // Chunks of the current dispatch finished so far; the caller waits for it to reach
  // job_.chunks. On a line of its own: every finished chunk writes it.
  alignas(64) std::atomic<uint32_t> done_{0};
  std::atomic<uint32_t> caller_sleeping_{0};
  // The process fork count when the workers were started; a mismatch means we are a forked
  // child whose workers do not exist.
  std::atomic<uint64_t> fork_epoch_{0};
  Status start_status_;
};

// The most threads a pool is given on request (--threads, KILN_NUM_THREADS): 4 x the machine's
// cores. More only adds stacks and contention; thousands exhaust the memory a process may use.
int max_pool_threads();

// The size of the default pool: the KILN_NUM_THREADS environment variable if it holds an integer
// in [1, max_pool_threads()], else std::thread::hardware_concurrency() (at least 1). Read on
// every call.
int default_num_threads();

// The process-wide pool, created with default_num_threads() threads on first use. Never
// destroyed, so it is usable from other static destructors.
ThreadPool& default_thread_pool();

}  // namespace kiln
