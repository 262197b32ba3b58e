// Thread counts are bounded: --threads above max_pool_threads() is refused, and a pool whose
// threads the system refuses runs with those it got and says so (it used to throw
// std::system_error out of kiln run, an abort).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "runtime/model_artifact.h"
#include "runtime/thread_pool.h"
#include "tests/hand_model.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

TEST(ThreadLimits, RunAndBenchRefuseMoreThreadsThanTheCap) {
  testing::TempDir dir;
  const std::string model = dir.file("model.kiln");
  ASSERT_TRUE(write_model_file(testing::hand_model(), model).ok());
  for (const char* command : {"run", "bench"}) {
    testing::CommandResult r =
        testing::run_kiln(std::string(command) + " " + model + " --threads 1024");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--threads"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(std::to_string(max_pool_threads())), std::string::npos) << r.output;
  }
  EXPECT_EQ(max_pool_threads() % 4, 0);
}

int64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

TEST(ThreadLimits, ThreadsTheSystemRefusesAreAnErrorNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit this test sets";
#endif
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Room for a few 8 MiB thread stacks, not for 64.
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(address_space_bytes() + (48 << 20));
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(10);
    ThreadPool pool(64);
    if (pool.start_status().ok()) _exit(11);
    if (pool.start_status().message().find("cannot start 64 threads") == std::string::npos) {
      _exit(12);
    }
    if (pool.num_threads() >= 64 || pool.num_threads() < 1) _exit(13);
    // The threads it has still cover a loop.
    std::atomic<int64_t> sum{0};
    auto body = [](int64_t begin, int64_t end, void* closure) {
      for (int64_t i = begin; i < end; ++i)
        static_cast<std::atomic<int64_t>*>(closure)->fetch_add(i);
    };
    pool.parallel_for(1000, body, &sum);
    _exit(sum.load() == 999 * 1000 / 2 ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace kiln
