#include "runtime/thread_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <new>
#include <string>
#include <system_error>

namespace kiln {
namespace {

// How long a waiting thread polls before it blocks in the kernel. Long enough to catch the next
// parallel loop of the same kernel (stages run back to back, and the timing loop calls the
// kernel repeatedly), short enough that an idle pool costs nothing measurable.
constexpr std::chrono::microseconds kSpinDuration{200};
// Polls with a bare pause before switching to yielding (a few microseconds).
constexpr uint32_t kPauseIterations = 32;
// Chunks per thread of a parallel loop, claimed in turn: a thread that runs slower (its core
// shared with another process or VM, or its chunks costlier) takes fewer, so a loop is not held
// up by one thread's static share. A few per thread bound the imbalance to about 1/kChunks of
// the loop while each chunk stays large.
constexpr int64_t kChunksPerThread = 4;

// Set on every pool worker and on a caller while it runs its own chunk: a parallel_for issued
// by such a thread runs serially instead of waiting on workers that may be busy with (or be)
// the very thread asking.
thread_local bool t_in_parallel_region = false;

// Incremented in a forked child (pthread_atfork), where no worker thread of any pool survives.
std::atomic<uint64_t> g_fork_epoch{0};

void RegisterForkHandlerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(nullptr, nullptr, [] { g_fork_epoch.fetch_add(1, std::memory_order_relaxed); });
  });
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// std::atomic<uint32_t> has the size and representation of uint32_t, which the futex needs.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

uint32_t* FutexWord(std::atomic<uint32_t>& word) { return reinterpret_cast<uint32_t*>(&word); }

// Blocks while *word == expected (returns at once if it differs, or spuriously).
void FutexWait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Waits until done(word) holds: polls for kSpinDuration, then sleeps on the futex. `sleepers`
// (a count of the threads asleep on `word`) is raised before the final checks so that a writer
// that changes `word` and then reads `sleepers` (both seq_cst) either is seen here or sees us
// and wakes us (Dekker-style).
template <typename Done>
uint32_t SpinThenBlock(std::atomic<uint32_t>& word, std::atomic<uint32_t>& sleepers, Done done) {
  uint32_t value = word.load(std::memory_order_acquire);
  if (done(value)) return value;
  const auto deadline = std::chrono::steady_clock::now() + kSpinDuration;
  for (uint32_t i = 1;; ++i) {
    // Pause-spin first (lowest latency); after that, yield between polls, so that a thread we
    // wait for but that shares our core (more pool threads than cores, or a busy machine) can
    // run instead of us.
    if (i < kPauseIterations) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
    value = word.load(std::memory_order_acquire);
    if (done(value)) return value;
    // Reading the clock costs more than a pause; check it only now and then.
    if (i % 16 == 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  while (!done(value = word.load(std::memory_order_seq_cst))) FutexWait(word, value);
  sleepers.fetch_sub(1, std::memory_order_relaxed);
  return value;
}

// Chunk `i` of `[0, n)` split into `k` near-equal contiguous chunks.
void ChunkBounds(int64_t n, int64_t k, int64_t i, int64_t* begin, int64_t* end) {
  const int64_t base = n / k;
  const int64_t rem = n % k;
  *begin = i * base + std::min(i, rem);
  *end = *begin + base + (i < rem ? 1 : 0);
}

void ParallelForTrampoline(void* pool, int64_t n, kiln_parallel_body body, void* closure) {
  static_cast<ThreadPool*>(pool)->parallel_for(n, body, closure);
}

constexpr int kGenerationShift = 32;
constexpr uint64_t kChunkMask = (uint64_t{1} << kGenerationShift) - 1;

uint64_t Claim(uint32_t generation, uint64_t chunk) {
  return (uint64_t{generation} << kGenerationShift) | chunk;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  RegisterForkHandlerOnce();
  api_.parallel_for = &ParallelForTrampoline;
  api_.pool = this;
  StartWorkers(num_threads);
}

ThreadPool::~ThreadPool() { StopWorkers(); }

void ThreadPool::set_num_threads(int num_threads) {
  if (ForkedSinceStart()) RecoverAfterFork();
  std::lock_guard<std::mutex> lock(dispatch_mu_);
  StopWorkers();
  StartWorkers(num_threads);
}

bool ThreadPool::ForkedSinceStart() const {
  return fork_epoch_.load(std::memory_order_relaxed) !=
         g_fork_epoch.load(std::memory_order_relaxed);
}

void ThreadPool::StartWorkers(int num_threads) {
  num_threads = std::max(1, num_threads);
  num_threads_.store(num_threads, std::memory_order_relaxed);
  fork_epoch_.store(g_fork_epoch.load(std::memory_order_relaxed), std::memory_order_relaxed);
  stop_.store(false, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  caller_sleeping_.store(0, std::memory_order_relaxed);
  workers_sleeping_.store(0, std::memory_order_relaxed);
  workers_.reserve(num_threads - 1);
  // Read here, not by the new thread: a dispatch or stop that bumps the generation before the
  // thread first runs must still wake it.
  const uint32_t first_seen = generation_.load(std::memory_order_relaxed);
  start_status_ = Status::Ok();
  for (int i = 1; i < num_threads; ++i) {
    try {
      workers_.emplace_back(&ThreadPool::WorkerLoop, this, first_seen);
    } catch (const std::system_error& e) {
      // Only the chunk count depends on num_threads_; the workers that exist claim them all.
      num_threads_.store(i, std::memory_order_relaxed);
      start_status_ =
          RuntimeError("cannot start " + std::to_string(num_threads) +
                       " threads: the system refused thread " + std::to_string(i + 1) + " (" +
                       e.what() + "; a limit on threads or memory): use fewer --threads");
      return;
    }
  }
}

Status ThreadPool::start_status() const { return start_status_; }

void ThreadPool::StopWorkers() {
  if (ForkedSinceStart()) {
    // A forked child: these threads exist only in the parent, so there is nothing to join.
    for (std::thread& t : workers_) t.detach();
    workers_.clear();
    return;
  }
  stop_.store(true, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(generation_);
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void ThreadPool::RecoverAfterFork() {
  // Only the forking thread exists in the child, so nothing else touches the pool here. The
  // mutex may have been held by a parent thread that the child does not have: make a new one.
  new (&dispatch_mu_) std::mutex();
  StopWorkers();
  StartWorkers(num_threads_.load(std::memory_order_relaxed));
}

bool ThreadPool::RunChunks(uint32_t generation) {
  uint64_t claim = job_.claim.load(std::memory_order_acquire);
  while (true) {
    // Seqlock read: the fields are those of `generation` if the claim below succeeds, since
    // the dispatcher rewrites them only after every chunk of the dispatch has been claimed
    // and done. A failed claim rereads them.
    if (static_cast<uint32_t>(claim >> kGenerationShift) != generation) return false;
    const int64_t chunk = static_cast<int64_t>(claim & kChunkMask);
    const int64_t chunks = job_.chunks.load(std::memory_order_relaxed);
    if (chunk >= chunks) return false;
    const kiln_parallel_body body = job_.body.load(std::memory_order_relaxed);
    void* const closure = job_.closure.load(std::memory_order_relaxed);
    const int64_t n = job_.n.load(std::memory_order_relaxed);
    // Pairs with the dispatcher's release fence: a field read above that a new dispatch wrote
    // makes the claim below see that dispatch's closing of the old generation, and fail.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!job_.claim.compare_exchange_weak(claim, claim + 1, std::memory_order_acquire,
                                          std::memory_order_acquire)) {
      continue;
    }
    int64_t begin, end;
    ChunkBounds(n, chunks, chunk, &begin, &end);
    body(begin, end, closure);
    // seq_cst publishes the body's writes to the caller and pairs with its store to
    // caller_sleeping_ (see SpinThenBlock).
    if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == static_cast<uint32_t>(chunks)) {
      return true;
    }
    claim = job_.claim.load(std::memory_order_acquire);
  }
}

void ThreadPool::WorkerLoop(uint32_t seen) {
  t_in_parallel_region = true;
  while (true) {
    seen = SpinThenBlock(generation_, workers_sleeping_, [seen](uint32_t g) { return g != seen; });
    if (stop_.load(std::memory_order_acquire)) return;
    // A worker that wakes after the dispatch is over (or during a later one) finds no chunk
    // of generation `seen` left and goes back to waiting; the caller never waits for it.
    if (RunChunks(seen) && caller_sleeping_.load(std::memory_order_seq_cst) != 0) {
      FutexWakeAll(done_);
    }
  }
}

void ThreadPool::parallel_for(int64_t n, kiln_parallel_body body, void* closure) {
  if (n <= 0) return;
  if (t_in_parallel_region || n == 1) {
    body(0, n, closure);
    return;
  }
  if (ForkedSinceStart()) RecoverAfterFork();
  std::lock_guard<std::mutex> lock(dispatch_mu_);
  const int64_t threads = std::min<int64_t>(n, num_threads_.load(std::memory_order_relaxed));
  if (threads == 1) {
    t_in_parallel_region = true;
    body(0, n, closure);
    t_in_parallel_region = false;
    return;
  }
  const int64_t chunks = std::min<int64_t>(n, threads * kChunksPerThread);

  const uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  // Every chunk of the previous dispatch is done, but a late worker may still be in RunChunks
  // of it. Close its generation before the fields change: such a worker has read its claim, may
  // read a field of this dispatch (a larger chunk count lets an index
  // past the old count pass its check) and would then claim a chunk of this loop under the old
  // generation, run it and count it after done_ is reset, so that done_ overshoots and the
  // caller waits forever (seen: done_ 9 of 8 chunks, `kiln bench --threads 2 --profile`).
  job_.claim.store(Claim(generation, 0), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  job_.body.store(body, std::memory_order_relaxed);
  job_.closure.store(closure, std::memory_order_relaxed);
  job_.n.store(n, std::memory_order_relaxed);
  job_.chunks.store(chunks, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  // Chunk 0 is the caller's; the rest go to whichever thread asks first. The release publishes
  // the fields and the reset of done_ to every thread that claims a chunk.
  job_.claim.store(Claim(generation, 1), std::memory_order_release);
  // seq_cst pairs with the workers' raising of workers_sleeping_.
  generation_.store(generation, std::memory_order_seq_cst);
  if (workers_sleeping_.load(std::memory_order_seq_cst) != 0) FutexWakeAll(generation_);

  int64_t begin, end;
  ChunkBounds(n, chunks, 0, &begin, &end);
  t_in_parallel_region = true;
  body(begin, end, closure);
  done_.fetch_add(1, std::memory_order_relaxed);
  RunChunks(generation);  // returns at once when no chunk is left to claim
  t_in_parallel_region = false;

  const uint32_t all = static_cast<uint32_t>(chunks);
  SpinThenBlock(done_, caller_sleeping_, [all](uint32_t done) { return done == all; });
}

int default_num_threads() {
  if (const char* env = std::getenv("KILN_NUM_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (*end == '\0' && value >= 1 && value <= max_pool_threads()) return static_cast<int>(value);
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int max_pool_threads() {
  return 4 * std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

ThreadPool& default_thread_pool() {
  static ThreadPool* const pool = new ThreadPool(default_num_threads());
  return *pool;
}

}  // namespace kiln
