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
#include <memory>
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

  // Runs body over [0, n): with T = min(n, num_threads()) threads taking part, the range is split
  // into min(n, 4 T) contiguous chunks of near-equal size (sizes differ by at most one, earlier
  // chunks larger; one chunk, [0, n), when T is 1). The caller runs chunk 0; then each of the T
  // threads claims the next unclaimed chunk until none is left, so a thread slowed down by
  // another process on its core does less of the loop instead of holding it up. Returns when
  // every chunk is done. n <= 0 does nothing.
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
  struct Slot;

  void StartWorkers(int num_threads);
  void StopWorkers();
  bool ForkedSinceStart() const;
  void RecoverAfterFork();
  void WorkerLoop(int index);
  // Claims chunks of the current dispatch from next_chunk_ and runs them until none is left.
  void RunChunks(kiln_parallel_body body, void* closure, int64_t n, int64_t chunks);

  std::atomic<int> num_threads_{1};
  KilnRuntimeApi api_;
  // Serializes dispatches from different outside threads; also guards set_num_threads.
  std::mutex dispatch_mu_;
  // slots_[i] is the mailbox of worker i (i >= 1); slot 0 is unused (the caller's chunk).
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
  // Chunks handed to workers in the current dispatch that have not finished yet.
  alignas(64) std::atomic<uint32_t> remaining_{0};
  // The next chunk of the current dispatch to claim (RunChunks), on a line of its own.
  alignas(64) std::atomic<int64_t> next_chunk_{0};
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
