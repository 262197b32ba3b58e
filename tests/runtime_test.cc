// Tests for runtime/: the thread pool, kernel buffers, artifact loading and the time evaluator.
// Timing assertions are one-sided and loose: these run on a noisy shared 2-core machine.
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/aligned_floats.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"
#include "runtime/time_evaluator.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// allocate_floats

// The VmFlags line of the mapping of /proc/self/smaps that starts at `start`, or "" if none does.
std::string VmFlagsOfMappingAt(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t want = reinterpret_cast<uintptr_t>(start);
  bool in_mapping = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(':') > 20) {
      in_mapping = begin == want;
    } else if (in_mapping && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// "[madvise]" or "[always]" when the kernel gives transparent huge pages to regions that ask.
std::string TransparentHugePagesMode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* mode : {"[always]", "[madvise]"}) {
    if (all.find(mode) != std::string::npos) return mode;
  }
  return "";
}

TEST(AllocateFloatsTest, SmallBuffersAreCacheLineAlignedAndZeroed) {
  for (int64_t bytes : {int64_t{0}, int64_t{4}, int64_t{100}, int64_t{64 * 1000 + 4}}) {
    AlignedFloats p = allocate_floats(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u) << bytes << " bytes";
    for (int64_t i = 0; i < std::max<int64_t>(16, bytes / 4); ++i) {
      ASSERT_EQ(p[i], 0.0f) << "float " << i << " of " << bytes << " bytes";
    }
  }
}

TEST(AllocateFloatsTest, LargeBuffersAreHugePageAlignedAndAskForHugePages) {
  constexpr int64_t kHugePage = int64_t{2} << 20;
  const int64_t bytes = 2 * kHugePage + 12;
  AlignedFloats p = allocate_floats(bytes);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % kHugePage, 0u);
  EXPECT_EQ(p[0], 0.0f);
  EXPECT_EQ(p[bytes / 4 - 1], 0.0f);
  if (TransparentHugePagesMode().empty()) {
    GTEST_SKIP() << "transparent huge pages are off on this machine: nothing to ask for";
  }
  // madvise(MADV_HUGEPAGE) splits the advised range into a mapping of its own, flagged "hg".
  const std::string flags = VmFlagsOfMappingAt(p.get());
  ASSERT_FALSE(flags.empty()) << "no mapping starts at the buffer";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
}

// ---------------------------------------------------------------------------------------------
// ThreadPool

// Each index writes its own slot, so a missed, repeated or overlapping chunk shows up.
struct FillClosure {
  std::vector<int64_t>* out;
  std::atomic<int>* calls;
};

void FillBody(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<FillClosure*>(closure);
  c->calls->fetch_add(1);
  for (int64_t i = begin; i < end; ++i) (*c->out)[i] += i + 1;
}

// The chunks ThreadPool::parallel_for splits [0, n) into on `threads` threads: one on one thread,
// else four per thread taking part.
int ExpectedChunks(int64_t n, int threads) {
  const int64_t taking_part = std::min<int64_t>(n, threads);
  return static_cast<int>(taking_part <= 1 ? std::min<int64_t>(n, 1)
                                           : std::min(n, 4 * taking_part));
}

// Runs FillBody over [0, n) via `pfor` and checks every index was visited exactly once.
template <typename ParallelFor>
void ExpectCoversRangeOnce(int64_t n, int expected_chunks, ParallelFor pfor) {
  std::vector<int64_t> out(static_cast<size_t>(n), 0);
  std::atomic<int> calls{0};
  FillClosure closure{&out, &calls};
  pfor(n, &FillBody, &closure);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], i + 1) << "index " << i << " of " << n;
  EXPECT_EQ(std::accumulate(out.begin(), out.end(), int64_t{0}), n * (n + 1) / 2);
  EXPECT_EQ(calls.load(), expected_chunks) << "n=" << n;
}

TEST(ThreadPoolTest, ParallelSumIsCorrectForManySizesAndThreadCounts) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 3, 7, 1000, 100003}) {
      SCOPED_TRACE("threads=" + std::to_string(threads) + " n=" + std::to_string(n));
      const int chunks = ExpectedChunks(n, threads);
      ExpectCoversRangeOnce(
          n, chunks, [&](int64_t m, kiln_parallel_body b, void* c) { pool.parallel_for(m, b, c); });
    }
  }
}

struct BoundsClosure {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::mutex mu;
};

TEST(ThreadPoolTest, ChunksAreContiguousAndBalanced) {
  ThreadPool pool(2);
  BoundsClosure closure;
  pool.parallel_for(
      19,
      [](int64_t begin, int64_t end, void* c) {
        auto* b = static_cast<BoundsClosure*>(c);
        std::lock_guard<std::mutex> lock(b->mu);
        b->chunks.emplace_back(begin, end);
      },
      &closure);
  std::sort(closure.chunks.begin(), closure.chunks.end());
  // Eight chunks (four per thread), the earlier ones one larger.
  const std::vector<std::pair<int64_t, int64_t>> expected = {
      {0, 3}, {3, 6}, {6, 9}, {9, 11}, {11, 13}, {13, 15}, {15, 17}, {17, 19}};
  EXPECT_EQ(closure.chunks, expected);
}

// A thread that is slow (here: a worker whose chunks sleep, as if its core were taken by another
// process) does not hold up the loop with a fixed share: the caller claims the chunks it has not
// reached.
TEST(ThreadPoolTest, ASlowThreadTakesFewerChunks) {
  struct Closure {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> on_caller{0}, on_worker{0};
  };
  ThreadPool pool(2);
  Closure c;
  pool.parallel_for(
      8,
      [](int64_t, int64_t, void* p) {
        auto* c = static_cast<Closure*>(p);
        if (std::this_thread::get_id() == c->caller) {
          c->on_caller += 1;
        } else {
          c->on_worker += 1;
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
      },
      &c);
  EXPECT_EQ(c.on_caller + c.on_worker, 8);
  // A fixed split would give the worker 4; it sleeps through its first while the caller runs on.
  EXPECT_LE(c.on_worker.load(), 2);
}

// The ids of this process's threads (/proc/self/task).
std::vector<pid_t> ThreadIds() {
  std::vector<pid_t> ids;
  for (const auto& entry : fs::directory_iterator("/proc/self/task")) {
    ids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A worker parked in this signal handler stands for one whose core another process has taken.
std::atomic<bool> g_worker_parked{false};
std::atomic<bool> g_release_worker{false};

void ParkUntilReleased(int) {
  g_worker_parked.store(true);
  while (!g_release_worker.load()) {
    timespec pause{0, 1000000};
    nanosleep(&pause, nullptr);
  }
}

// The loop is done when its chunks are: the caller runs every chunk of a worker that never wakes
// up, and does not wait for it.
TEST(ThreadPoolTest, AWorkerThatNeverWakesDoesNotHoldUpTheLoop) {
  const std::vector<pid_t> before = ThreadIds();
  ThreadPool pool(2);
  const std::vector<pid_t> after = ThreadIds();
  std::vector<pid_t> started;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(started));
  ASSERT_EQ(started.size(), 1u);

  struct sigaction park {
  }, saved{};
  park.sa_handler = &ParkUntilReleased;
  sigemptyset(&park.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &park, &saved), 0);
  g_worker_parked = false;
  g_release_worker = false;
  // A pool that waited for every worker would wait below until the watchdog released the parked
  // one (20 s); the test then fails instead of hanging.
  std::atomic<bool> test_over{false};
  std::atomic<bool> released_by_watchdog{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 2000 && !test_over; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!test_over) released_by_watchdog = true;
    g_release_worker = true;
  });
  ASSERT_EQ(syscall(SYS_tgkill, getpid(), started[0], SIGUSR1), 0);
  while (!g_worker_parked && !released_by_watchdog) std::this_thread::yield();

  struct Closure {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> chunks{0}, off_caller{0};
  };
  Closure c;
  for (int i = 0; i < 100; ++i) {
    pool.parallel_for(
        8,
        [](int64_t, int64_t, void* p) {
          auto* c = static_cast<Closure*>(p);
          c->chunks += 1;
          if (std::this_thread::get_id() != c->caller) c->off_caller += 1;
        },
        &c);
  }
  const bool returned_while_parked = !released_by_watchdog.load();
  test_over = true;
  watchdog.join();
  sigaction(SIGUSR1, &saved, nullptr);
  EXPECT_TRUE(returned_while_parked);
  EXPECT_EQ(c.chunks.load(), 800);
  EXPECT_EQ(c.off_caller.load(), 0);

  // Released, the worker takes part again (or finds nothing left) without disturbing a loop.
  for (int i = 0; i < 1000; ++i) {
    ExpectCoversRangeOnce(
        37, ExpectedChunks(37, 2),
        [&](int64_t n, kiln_parallel_body b, void* cl) { pool.parallel_for(n, b, cl); });
  }
}

// Loops of `a` and of `b` iterations in turn, `iterations` times, on a pool of `threads`: every
// index is filled exactly once by the loop it belongs to, in the expected number of chunks.
void ExpectAlternatingLoopsFillEachIndexOnce(int threads, size_t a, size_t b, int iterations) {
  ThreadPool pool(threads);
  std::vector<int64_t> first(a), second(b);
  for (int iter = 0; iter < iterations; ++iter) {
    std::vector<int64_t>& out = iter % 2 == 0 ? first : second;
    std::fill(out.begin(), out.end(), 0);
    std::atomic<int> calls{0};
    FillClosure closure{&out, &calls};
    pool.parallel_for(static_cast<int64_t>(out.size()), &FillBody, &closure);
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i], static_cast<int64_t>(i) + 1) << "iteration " << iter << " index " << i;
    }
    ASSERT_EQ(calls.load(), ExpectedChunks(static_cast<int64_t>(out.size()), threads));
  }
}

// Many threads on few cores wake late, often after the loop they were woken for is over; a late
// worker must never run a chunk of a later loop with the earlier loop's body or range.
TEST(ThreadPoolTest, LateWorkersNeverMixUpLoops) {
  ExpectAlternatingLoopsFillEachIndexOnce(8, 64, 61, 3000);
}

// Loops of 3 and of 64 iterations in turn (3 and 8 chunks on two threads): a worker finishing
// the small loop's last chunk must not take a chunk of the large one under the small loop's
// generation (which ran that chunk twice and counted it once too often, so that the caller
// waited forever for a count it had passed).
TEST(ThreadPoolTest, AWorkerLeavingALoopNeverClaimsAChunkOfTheNextOne) {
  ExpectAlternatingLoopsFillEachIndexOnce(2, 3, 64, 100000);
}

TEST(ThreadPoolTest, CallerRunsChunkZeroAndSingleThreadPoolStartsNoThreads) {
  struct Closure {
    std::thread::id caller = std::this_thread::get_id();
    std::thread::id chunk0;
    std::atomic<int> off_caller{0};
  };
  ThreadPool pool(1);
  Closure c;
  pool.parallel_for(
      100,
      [](int64_t begin, int64_t end, void* p) {
        auto* c = static_cast<Closure*>(p);
        if (std::this_thread::get_id() != c->caller) c->off_caller += 1;
        if (begin == 0) c->chunk0 = std::this_thread::get_id();
        (void)end;
      },
      &c);
  EXPECT_EQ(c.off_caller.load(), 0);
  EXPECT_EQ(c.chunk0, c.caller);

  ThreadPool pool4(4);
  Closure c4;
  pool4.parallel_for(
      4,
      [](int64_t begin, int64_t, void* p) {
        auto* c = static_cast<Closure*>(p);
        if (begin == 0) c->chunk0 = std::this_thread::get_id();
      },
      &c4);
  EXPECT_EQ(c4.chunk0, c4.caller);
}

TEST(ThreadPoolTest, ManyBackToBackDispatches) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  for (int iter = 0; iter < 20000; ++iter) {
    pool.parallel_for(
        8,
        [](int64_t begin, int64_t end, void* p) {
          static_cast<std::atomic<int64_t>*>(p)->fetch_add(end - begin);
        },
        &total);
  }
  EXPECT_EQ(total.load(), 8 * 20000);
}

struct NestedClosure {
  ThreadPool* inner_pool;
  std::atomic<int64_t> sum{0};
};

void InnerBody(int64_t begin, int64_t end, void* closure) {
  auto* sum = static_cast<std::atomic<int64_t>*>(closure);
  for (int64_t i = begin; i < end; ++i) sum->fetch_add(i);
}

void OuterBody(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<NestedClosure*>(closure);
  for (int64_t i = begin; i < end; ++i) c->inner_pool->parallel_for(100, &InnerBody, &c->sum);
}

TEST(ThreadPoolTest, NestedParallelForRunsSeriallyWithoutDeadlock) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    ThreadPool other(2);
    for (ThreadPool* inner : {&pool, &other}) {
      NestedClosure closure{inner};
      pool.parallel_for(16, &OuterBody, &closure);
      EXPECT_EQ(closure.sum.load(), 16 * (99 * 100 / 2)) << "threads=" << threads;
    }
  }
}

TEST(ThreadPoolTest, ConcurrentCallersAreSerialized) {
  ThreadPool pool(3);
  auto hammer = [&pool](std::atomic<int64_t>* total) {
    for (int iter = 0; iter < 2000; ++iter) {
      pool.parallel_for(
          30,
          [](int64_t begin, int64_t end, void* p) {
            static_cast<std::atomic<int64_t>*>(p)->fetch_add(end - begin);
          },
          total);
    }
  };
  std::atomic<int64_t> a{0}, b{0};
  std::thread t1(hammer, &a), t2(hammer, &b);
  t1.join();
  t2.join();
  EXPECT_EQ(a.load(), 30 * 2000);
  EXPECT_EQ(b.load(), 30 * 2000);
}

TEST(ThreadPoolTest, ApiTrampolineCallsThisPool) {
  ThreadPool pool(3);
  const KilnRuntimeApi* api = pool.api();
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->pool, &pool);
  ExpectCoversRangeOnce(
      1000, ExpectedChunks(1000, 3),
      [&](int64_t n, kiln_parallel_body b, void* c) { api->parallel_for(api->pool, n, b, c); });
}

TEST(ThreadPoolTest, SetNumThreadsResizes) {
  ThreadPool pool(2);
  for (int threads : {4, 1, 3}) {
    pool.set_num_threads(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    ExpectCoversRangeOnce(
        1000, ExpectedChunks(1000, threads),
        [&](int64_t n, kiln_parallel_body b, void* c) { pool.parallel_for(n, b, c); });
  }
  pool.set_num_threads(0);
  EXPECT_EQ(pool.num_threads(), 1);
}

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

TEST(ThreadPoolTest, IdlePoolUsesAlmostNoCpu) {
  ThreadPool pool(4);
  // Wake the workers so that they are in their post-dispatch spin when the idle period starts.
  std::atomic<int64_t> total{0};
  for (int i = 0; i < 10; ++i) {
    pool.parallel_for(
        4,
        [](int64_t begin, int64_t end, void* p) {
          static_cast<std::atomic<int64_t>*>(p)->fetch_add(end - begin);
        },
        &total);
  }
  const double before = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double used = ProcessCpuSeconds() - before;
  // Three spinning workers would use ~600 ms here (or ~200 ms on 2 cores).
  EXPECT_LT(used, 0.050);
}

TEST(ThreadPoolTest, DefaultSizeComesFromEnvironment) {
  const char* saved = std::getenv("KILN_NUM_THREADS");
  const std::string saved_value = saved != nullptr ? saved : "";
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  setenv("KILN_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_num_threads(), 3);
  for (const char* bad : {"0", "-2", "abc", "4x", ""}) {
    setenv("KILN_NUM_THREADS", bad, 1);
    EXPECT_EQ(default_num_threads(), hardware) << "KILN_NUM_THREADS=" << bad;
  }
  unsetenv("KILN_NUM_THREADS");
  EXPECT_EQ(default_num_threads(), hardware);
  if (saved != nullptr) setenv("KILN_NUM_THREADS", saved_value.c_str(), 1);

  ThreadPool& pool = default_thread_pool();
  EXPECT_EQ(&pool, &default_thread_pool());
  ExpectCoversRangeOnce(
      50, ExpectedChunks(50, pool.num_threads()),
      [&](int64_t n, kiln_parallel_body b, void* c) { pool.parallel_for(n, b, c); });
}

TEST(ThreadPoolTest, WorksInForkedChild) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  auto body = [](int64_t begin, int64_t end, void* p) {
    static_cast<std::atomic<int64_t>*>(p)->fetch_add(end - begin);
  };
  pool.parallel_for(30, body, &total);  // The parent's workers are running.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Without the fork recovery this would wait forever for workers the child does not have.
    alarm(20);
    std::atomic<int64_t> child_total{0};
    for (int i = 0; i < 100; ++i) pool.parallel_for(30, body, &child_total);
    _exit(child_total.load() == 3000 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  pool.parallel_for(30, body, &total);  // The parent's pool is unaffected.
  EXPECT_EQ(total.load(), 60);
}

// ---------------------------------------------------------------------------------------------
// Artifact

// The C declarations of kernel_abi.h, restated so the test shared object compiles on its own.
// The stage doubles buffer 0 into buffer 1 through the runtime's parallel_for, so loading,
// symbol lookup and the API table are exercised together.
std::string StageSource(const std::string& stage_name, float scale) {
  std::ostringstream src;
  src << R"(#include <stdint.h>
typedef void (*kiln_parallel_body)(int64_t begin, int64_t end, void* closure);
typedef struct KilnRuntimeApi {
  void (*parallel_for)(void* pool, int64_t n, kiln_parallel_body body, void* closure);
  void* pool;
} KilnRuntimeApi;
static void body(int64_t begin, int64_t end, void* closure) {
  float* const* buffers = (float* const*)closure;
  for (int64_t i = begin; i < end; ++i) buffers[1][i] = (float)()"
      << scale << R"() * buffers[0][i];
}
void )"
      << stage_name << R"((float* const* buffers, const KilnRuntimeApi* api) {
  api->parallel_for(api->pool, 1000, body, (void*)buffers);
}
)";
  return src.str();
}

bool HaveCompiler() { return std::system("command -v cc >/dev/null 2>&1") == 0; }

// Compiles `source` into a shared object with the system C compiler and returns its bytes. The
// scratch directory is removed unless `keep_dir` is given (then it receives the directory and
// `so_path_out` the object's path). Records a test failure and returns "" if compiling fails.
std::string CompileSharedObject(const std::string& source, std::string* so_path_out = nullptr,
                                fs::path* keep_dir = nullptr) {
  std::string tmpl = (fs::temp_directory_path() / "kiln_runtime_test_XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return "";
  }
  const fs::path dir = tmpl;
  { std::ofstream(dir / "stage.c") << source; }
  const std::string cmd = "cc -shared -fPIC -O2 -o '" + (dir / "stage.so").string() + "' '" +
                          (dir / "stage.c").string() + "'";
  std::string bytes;
  if (std::system(cmd.c_str()) == 0) {
    std::ifstream in(dir / "stage.so", std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  } else {
    ADD_FAILURE() << "compiling the test stage failed:\n" << source;
  }
  if (keep_dir != nullptr) {
    *keep_dir = dir;
    if (so_path_out != nullptr) *so_path_out = (dir / "stage.so").string();
  } else {
    fs::remove_all(dir);
  }
  return bytes;
}

bool MapsMention(const std::string& needle) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::vector<fs::path> TempEntriesContaining(const std::string& needle) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    if (entry.path().filename().string().find(needle) != std::string::npos) {
      found.push_back(entry.path());
    }
  }
  return found;
}

// Runs the test stage on 1000 inputs and returns output[i] / input[i] (checked uniform).
float RunStage(kiln_stage_fn fn, const KilnRuntimeApi* api) {
  std::vector<float> in(1000), out(1000, 0.0f);
  for (int i = 0; i < 1000; ++i) in[i] = static_cast<float>(i + 1);
  float* buffers[] = {in.data(), out.data()};
  fn(buffers, api);
  const float scale = out[0] / in[0];
  for (int i = 0; i < 1000; ++i) {
    if (out[i] != scale * in[i]) return -1.0f;
  }
  return scale;
}

TEST(ArtifactTest, LoadsFromBytesViaMemfdAndLeavesNoFile) {
  ASSERT_TRUE(HaveCompiler()) << "no system C compiler (scripts/install-deps.sh installs one)";
  const std::string bytes = CompileSharedObject(StageSource("kiln_stage_0", 2.0f));
  ASSERT_FALSE(bytes.empty());
  const std::string label = "kiln_rt_test_artifact_" + std::to_string(getpid());

  {
    auto artifact = Artifact::load_from_bytes(bytes, label);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    EXPECT_EQ((*artifact)->label(), label);
    // Mapped from the memfd, and nothing named after it on disk.
    EXPECT_TRUE(MapsMention("memfd:" + label));
    EXPECT_TRUE(TempEntriesContaining(label).empty());

    auto stage = (*artifact)->stage("kiln_stage_0");
    ASSERT_TRUE(stage.ok()) << stage.status().message();
    ThreadPool pool(2);
    EXPECT_EQ(RunStage(*stage, pool.api()), 2.0f);
  }
  // Unloaded with the artifact.
  EXPECT_FALSE(MapsMention("memfd:" + label));
  EXPECT_TRUE(TempEntriesContaining(label).empty());
}

TEST(ArtifactTest, MissingStageNamesSymbolAndLabel) {
  ASSERT_TRUE(HaveCompiler()) << "no system C compiler (scripts/install-deps.sh installs one)";
  const std::string bytes = CompileSharedObject(StageSource("kiln_stage_0", 2.0f));
  ASSERT_FALSE(bytes.empty());
  auto artifact = Artifact::load_from_bytes(bytes, "conv2d_cfg17");
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  auto stage = (*artifact)->stage("kiln_stage_9");
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.status().code(), StatusCode::kRuntime);
  EXPECT_NE(stage.status().message().find("kiln_stage_9"), std::string::npos);
  EXPECT_NE(stage.status().message().find("conv2d_cfg17"), std::string::npos);
}

TEST(ArtifactTest, ArtifactsWithSameSymbolsAreIsolatedAndReloadsAreFresh) {
  ASSERT_TRUE(HaveCompiler()) << "no system C compiler (scripts/install-deps.sh installs one)";
  const std::string twice = CompileSharedObject(StageSource("kiln_stage_0", 2.0f));
  const std::string thrice = CompileSharedObject(StageSource("kiln_stage_0", 3.0f));
  ASSERT_FALSE(twice.empty() || thrice.empty());
  ThreadPool pool(2);
  {
    auto a = Artifact::load_from_bytes(twice, "a");
    auto b = Artifact::load_from_bytes(thrice, "b");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(RunStage(*(*a)->stage("kiln_stage_0"), pool.api()), 2.0f);
    EXPECT_EQ(RunStage(*(*b)->stage("kiln_stage_0"), pool.api()), 3.0f);
  }
  // Load and unload alternately: descriptor numbers get reused, code must not be stale.
  for (int i = 0; i < 20; ++i) {
    const bool even = i % 2 == 0;
    auto a = Artifact::load_from_bytes(even ? twice : thrice, "reload");
    ASSERT_TRUE(a.ok()) << a.status().message();
    auto stage = (*a)->stage("kiln_stage_0");
    ASSERT_TRUE(stage.ok());
    EXPECT_EQ(RunStage(*stage, pool.api()), even ? 2.0f : 3.0f) << "iteration " << i;
  }
}

TEST(ArtifactTest, LoadsFromFile) {
  ASSERT_TRUE(HaveCompiler()) << "no system C compiler (scripts/install-deps.sh installs one)";
  std::string so_path;
  fs::path dir;
  const std::string bytes = CompileSharedObject(StageSource("kiln_stage_1", 4.0f), &so_path, &dir);
  if (bytes.empty()) fs::remove_all(dir);
  ASSERT_FALSE(bytes.empty());
  auto artifact = Artifact::load_from_file(so_path);
  fs::remove_all(dir);  // Loaded from memory: the file is no longer needed.
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ((*artifact)->label(), so_path);
  ThreadPool pool(2);
  EXPECT_EQ(RunStage(*(*artifact)->stage("kiln_stage_1"), pool.api()), 4.0f);

  auto missing = Artifact::load_from_file(dir.string() + "/nope.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
  EXPECT_NE(missing.status().message().find("nope.so"), std::string::npos);
}

TEST(ArtifactTest, GarbageBytesGiveAnErrorNotACrash) {
  auto garbage = Artifact::load_from_bytes("this is not an ELF file at all", "garbage_label");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kRuntime);
  EXPECT_NE(garbage.status().message().find("garbage_label"), std::string::npos);
  EXPECT_NE(garbage.status().message().find("not an ELF file"), std::string::npos);

  // An ELF magic with nothing valid behind it.
  std::string fake_elf(4096, '\0');
  fake_elf.replace(0, 4,
                   "\x7f"
                   "ELF");
  EXPECT_FALSE(Artifact::load_from_bytes(fake_elf, "fake_elf").ok());

  auto empty = Artifact::load_from_bytes("", "empty");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Time evaluator

TEST(TimeEvaluatorTest, CallCountIsOnePlusRepeatTimesNumber) {
  for (auto [number, repeat] : {std::pair{1, 1}, {4, 3}, {10, 1}, {1, 10}, {7, 5}}) {
    int calls = 0;
    TimeOptions options;
    options.number = number;
    options.repeat = repeat;
    auto costs = time_function([&calls] { ++calls; }, options, {});
    ASSERT_TRUE(costs.ok()) << costs.status().message();
    EXPECT_EQ(calls, 1 + repeat * number);
    ASSERT_EQ(costs->size(), static_cast<size_t>(repeat));
    for (double c : *costs) EXPECT_GE(c, 0.0);

    // Without the warm-up (the caller's own last call was it), only the timed calls.
    calls = 0;
    options.warm_up = false;
    ASSERT_TRUE(time_function([&calls] { ++calls; }, options, {}).ok());
    EXPECT_EQ(calls, repeat * number);
  }
}

TEST(TimeEvaluatorTest, CostsAreSecondsPerCall) {
  TimeOptions options;
  options.number = 2;
  options.repeat = 2;
  auto costs =
      time_function([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, options, {});
  ASSERT_TRUE(costs.ok());
  // Sleeping never returns early; the upper bound is loose for a loaded machine.
  for (double c : *costs) {
    EXPECT_GE(c, 0.002);
    EXPECT_LT(c, 1.0);
  }
}

TEST(TimeEvaluatorTest, MinRepeatMsGrowsNumberUntilEachRepeatIsLongEnough) {
  constexpr int kMinRepeatMs = 20;
  TimeOptions options;
  options.number = 1;
  options.repeat = 3;
  options.min_repeat_ms = kMinRepeatMs;
  int64_t calls = 0;
  auto costs = time_function(
      [&calls] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      },
      options, {});
  ASSERT_TRUE(costs.ok());
  ASSERT_EQ(costs->size(), 3u);
  // cost = elapsed / number with elapsed >= min_repeat_ms, so a repeat made at least
  // min_repeat_ms / cost calls; all repeats together at most calls - 1 (the warm-up).
  double lower_bound = 0;
  for (double c : *costs) {
    ASSERT_GT(c, 0.0);
    lower_bound += kMinRepeatMs / 1e3 / c;
  }
  EXPECT_GE(static_cast<double>(calls - 1), lower_bound * (1 - 1e-9));
  // Growth happened: 1 + 3 * 1 calls could not take 20 ms each.
  EXPECT_GT(calls, 4);
}

TEST(TimeEvaluatorTest, GrowNumberFollowsTvmFormula) {
  // 1 call took 1 ms, 5 ms wanted: 5 / 1 + 1 = 6 beats 1 * 1.618.
  EXPECT_EQ(grow_number(1, 1.0, 5), 6);
  // 100 calls took 9 ms, 10 ms wanted: 10 / 0.09 + 1 = 112.1 < 161.8.
  EXPECT_EQ(grow_number(100, 9.0, 10), 161);
  // Absurdly fast calls saturate instead of overflowing.
  EXPECT_EQ(grow_number(1, 1e-9, 1000000), INT_MAX);
}

TEST(TimeEvaluatorTest, CacheFlushRunsOncePerRepeatWithoutChangingData) {
  std::vector<float> a(100000, 1.5f);
  std::vector<char> odd(1000, 'x');
  TimeOptions options;
  options.number = 2;
  options.repeat = 4;
  options.enable_cpu_cache_flush = true;
  int calls = 0;
  auto costs = time_function([&calls] { ++calls; }, options,
                             {{a.data(), a.size() * sizeof(float)}, {odd.data() + 3, 997}});
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  EXPECT_EQ(calls, 1 + 4 * 2);
  EXPECT_EQ(a[12345], 1.5f);
  EXPECT_EQ(odd[999], 'x');
  EXPECT_TRUE(flush_cpu_cache({}).ok());
}

TEST(TimeEvaluatorTest, RejectsBadOptions) {
  auto f = [] {};
  TimeOptions options;
  options.number = 0;
  EXPECT_EQ(time_function(f, options, {}).status().code(), StatusCode::kInvalidArgument);
  options = TimeOptions();
  options.repeat = 0;
  EXPECT_EQ(time_function(f, options, {}).status().code(), StatusCode::kInvalidArgument);
  options = TimeOptions();
  options.min_repeat_ms = -1;
  EXPECT_EQ(time_function(f, options, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(time_function(nullptr, TimeOptions(), {}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(TimeEvaluatorTest, DefaultsAreAutotvmRunnerDefaults) {
  TimeOptions options;
  EXPECT_EQ(options.number, 4);
  EXPECT_EQ(options.repeat, 3);
  EXPECT_EQ(options.min_repeat_ms, 0);
  EXPECT_FALSE(options.enable_cpu_cache_flush);
}

TEST(TimeEvaluatorTest, AutotvmCostsDropsMinAndMax) {
  EXPECT_EQ(autotvm_costs({3.0, 1.0, 2.0}), (std::vector<double>{2.0}));
  EXPECT_EQ(autotvm_costs({5.0, 1.0, 4.0, 2.0, 3.0}), (std::vector<double>{2.0, 3.0, 4.0}));
  EXPECT_EQ(autotvm_costs({2.0, 1.0}), (std::vector<double>{2.0, 1.0}));
  EXPECT_EQ(autotvm_costs({7.0}), (std::vector<double>{7.0}));
  EXPECT_TRUE(autotvm_costs({}).empty());
  EXPECT_EQ(autotvm_costs({1.0, 1.0, 1.0, 9.0}), (std::vector<double>{1.0, 1.0}));
}

}  // namespace
}  // namespace kiln
