// End to end, the real `kiln` binary: inputs that used to abort it or quietly damage a store
// (issue 9): bad targets, huge shapes, out-of-range numeric options, Ctrl-C during a tune; and
// the CLI's help, version and template listing.
#include <gtest/gtest.h>
#include <llvm/Support/ErrorHandling.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "builder/llvm_init.h"
#include "builder/target.h"
#include "store/open_store.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;

CommandResult kiln(const std::string& args) { return testing::run_kiln(args); }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class CliHardening : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }
  testing::TempDir dir_{"kiln-cli-hardening"};
};

const char* kSmallDense = "--workload dense:M=16,N=16,K=16 --template dense_pack.x86";

TEST(TargetParse, RejectsWhatLlvmCannotGenerateCodeFor) {
  for (const char* bad : {"llvm -mcpu=notacpu", "llvm -mcpu=i386", "llvm -mattr=+nosuch",
                          "llvm -mattr=avx2", "llvm -mtriple=sparc-sun-solaris", "cuda", ""}) {
    Result<Target> t = builder::parse_target(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_TRUE(contains(t.status().message(), "target '")) << t.status().message();
  }
  for (const char* good : {"llvm", "llvm -mcpu=znver4", "llvm -mcpu=x86-64-v3 -mattr=+avx2,-fma",
                           "llvm -keys=cpu -mcpu=skylake-avx512"}) {
    EXPECT_TRUE(builder::parse_target(good).ok()) << good;
  }
}

TEST(LlvmFatalError, IsAOneLineMessageAndExitCodeNotAnAbort) {
  EXPECT_EXIT(
      {
        builder::initialize_llvm();
        llvm::report_fatal_error("simulated backend failure");
      },
      ::testing::ExitedWithCode(builder::kLlvmFatalExitCode),
      "kiln: LLVM error: simulated backend failure");
}

TEST_F(CliHardening, BadTargetsAreUsageErrorsInEveryCommandAndStoreNothing) {
  for (const char* target : {"llvm -mcpu=notacpu", "llvm -mcpu=i386", "llvm -mattr=+nosuch"}) {
    std::string t = std::string(" --target '") + target + "'";
    for (const std::string& command :
         {std::string("measure ") + kSmallDense, std::string("show ") + kSmallDense,
          std::string("show --asm ") + kSmallDense, std::string("show --llvm ") + kSmallDense,
          std::string("space ") + kSmallDense}) {
      CommandResult r = kiln(command + t);
      EXPECT_EQ(r.exit_code, 2) << command << t << ": " << r.output;
      EXPECT_TRUE(contains(r.output, "kiln: target '")) << r.output;
      EXPECT_FALSE(contains(r.output, "LLVM ERROR")) << r.output;
    }
    std::string db = path("t.db");
    CommandResult r = kiln(std::string("tune ") + kSmallDense + " --trials 2 --db " + db + t);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_FALSE(fs::exists(db)) << "a store was created for a bogus target";
  }
  CommandResult r = kiln(std::string("space ") + kSmallDense + " --target cuda");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "target 'cuda'")) << r.output;
}

TEST_F(CliHardening, ShapesBeyondTheLimitsSayTheLimits) {
  CommandResult r = kiln("measure --workload dense:M=16777217,N=2,K=2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "2^24")) << r.output;
  EXPECT_TRUE(contains(r.output, "2^34")) << r.output;
}

TEST_F(CliHardening, MeasureOutOfMemoryIsAResultNotACrash) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit this test sets";
#else
  // 16 GiB of tensors under an 8 GB address-space limit: the runner process cannot allocate
  // them. kiln measure must report it as the config's result and exit 1, not die of bad_alloc.
  std::string command = "ulimit -v 8000000; " + std::string(KILN_BINARY) +
                        " measure --workload dense:M=65536,N=65536,K=16 --template "
                        "dense_pack.x86 2>&1";
  FILE* pipe = popen(("/bin/bash -c '" + command + "'").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_TRUE(contains(output, "RUNTIME_DEVICE: out of memory")) << output;
#endif
}

TEST_F(CliHardening, NumericOptionsOutOfRangeAreRejectedWithKilnsMessage) {
  std::string db = path("n.db");
  std::string base = std::string("tune ") + kSmallDense + " --trials 2 --db " + db + " ";
  for (const char* bad :
       {"--timeout 0", "--timeout -1", "--timeout nan", "--timeout inf", "--timeout 1e300",
        "--timeout 10s", "--build-timeout 0", "--cooldown-interval -1", "--cooldown-interval nan",
        "--number 0", "--repeat 0", "--min-repeat-ms -1", "--trials 0", "--plan-size 0",
        "--early-stopping 0", "--threads 0", "--n-parallel 0", "--n-parallel 100000"}) {
    CommandResult r = kiln(base + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "expected a")) << bad << ": " << r.output;
    EXPECT_FALSE(contains(r.output, "1797693")) << r.output;  // CLI11's unreadable range
    EXPECT_FALSE(fs::exists(db)) << bad;
  }
  CommandResult r = kiln(std::string("measure ") + kSmallDense + " --timeout inf");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST_F(CliHardening, HelpShowsEveryDefault) {
  CommandResult r = kiln("tune --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* shown :
       {"--trials", "=1000", "--db", "=kiln.db", "--seed", "=0", "--timeout", "=10", "--number",
        "=4", "--repeat", "=3", "--cooldown-interval", "=0.1", "--tuner", "=xgb", "=32"}) {
    EXPECT_TRUE(contains(r.output, shown)) << shown << "\n" << r.output;
  }
}

TEST_F(CliHardening, VersionAndTemplates) {
  CommandResult r = kiln("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "kiln ")) << r.output;
  r = kiln("templates");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name :
       {"dense", "dense_nopack.x86", "dense_pack.x86", "conv2d", "conv2d_NCHWc.x86",
        "depthwise_conv2d", "depthwise_conv2d_NCHWc.x86", "batch_matmul", "batch_matmul.x86"}) {
    EXPECT_TRUE(contains(r.output, name)) << name;
  }
}

store::Record record_for(const std::string& target, double cost) {
  store::Record r;
  r.target = target;
  r.task_name = "dense_pack.x86";
  r.workload = "dense:K=16,M=16,N=16,bias=0";
  r.config_index = 0;
  r.entities = nlohmann::json::array();
  r.costs = {cost};
  r.all_cost = 1;
  r.timestamp = 1.7e9;
  r.flop = 8192;
  r.source = "test";
  return r;
}

TEST_F(CliHardening, BestHonoursTarget) {
  std::string db = path("best.db");
  {
    auto s = store::open_store(db);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->append({record_for("llvm -mcpu=znver4", 1e-3),
                              record_for("llvm -mcpu=skylake-avx512", 2e-3)})
                    .ok());
  }
  CommandResult r = kiln("best --db " + db + " --target 'llvm -mcpu=skylake-avx512'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "target llvm -mcpu=skylake-avx512")) << r.output;
  EXPECT_FALSE(contains(r.output, "znver4")) << r.output;

  r = kiln("best --db " + db + " --target 'llvm -mcpu=haswell'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no successful record for target 'llvm -mcpu=haswell'"))
      << r.output;

  r = kiln("best --db " + db);  // no --target: every target
  EXPECT_TRUE(contains(r.output, "znver4") && contains(r.output, "skylake-avx512")) << r.output;

  r = kiln("best --db " + db + " --target 'llvm -mcpu=notacpu'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

int64_t count_records(const std::string& db, std::set<int>* error_codes) {
  auto s = store::open_store(db, /*read_only=*/true);
  if (!s.ok()) return -1;
  auto records = (*s)->records();
  if (!records.ok()) return -1;
  if (error_codes) {
    for (const auto& r : *records) error_codes->insert(r.error_no);
  }
  return static_cast<int64_t>(records->size());
}

TEST_F(CliHardening, CtrlCCommitsTheBatchInFlightAndSaysHowManyTrialsAreSaved) {
  std::string db = path("int.db");
  std::string out = path("out.txt");
  std::string args = std::string("tune ") + kSmallDense +
                     " --tuner random --trials 400 --number 1 --repeat 1 --cooldown-interval "
                     "0.05 --db " +
                     db;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, as a shell job: Ctrl-C reaches every process in it
    execl("/bin/sh", "sh", "-c",
          (std::string("exec ") + KILN_BINARY + " " + args + " > " + out + " 2>&1").c_str(),
          (char*)nullptr);
    _exit(127);
  }
  setpgid(pid, pid);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int64_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    seen = fs::exists(db) ? count_records(db, nullptr) : 0;
    if (seen >= 6) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(seen, 6) << "the tune made no progress";
  kill(-pid, SIGINT);  // the whole group: kiln and its builder and runner processes
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "kiln died of the signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 130);

  std::set<int> errors;
  int64_t stored = count_records(db, &errors);
  ASSERT_LT(stored, 400) << "interrupted too late to test anything";
  std::string output;
  {
    FILE* f = fopen(out.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) output.append(buf, n);
    fclose(f);
  }
  EXPECT_TRUE(contains(output, "interrupted: " + std::to_string(stored) + " trials saved in " + db))
      << output;
  // The signal reached the builder and runner processes too: none of their configs may be
  // recorded as a failure because of it.
  EXPECT_EQ(errors, (std::set<int>{0})) << output;
}

}  // namespace
}  // namespace kiln
