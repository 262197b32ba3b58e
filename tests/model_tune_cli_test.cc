// End to end: `kiln tune MODEL` as a real process on a real SQLite file: killed twice with
// SIGKILL mid-run and resumed, it ends with exactly its trial budget, no config measured twice;
// the store then compiles into a model that matches the reference output. Also the time budget
// and the --ops filter.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "builder/target.h"
#include "exchange/target_description.h"
#include "ops/registry.h"
#include "store/open_store.h"
#include "store/record_selection.h"
#include "tests/max_error.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

const fs::path kMlp = fs::path(KILN_SHARED_DIR) / "models" / "mlp";

// Small and quick: random search, one run per repeat, no cooldown.
std::string tune_args(const std::string& db, const std::string& budget) {
  return "tune " + (kMlp / "mlp.onnx").string() + " --db " + db + " " + budget +
         " --tuner random --number 1 --repeat 1 --cooldown-interval 0 --seed 5";
}

int64_t count_records(const std::string& db) {
  if (!fs::exists(db)) return 0;
  auto s = store::open_store(db, /*read_only=*/true);
  if (!s.ok()) return 0;
  auto n = (*s)->count();
  return n.ok() ? *n : 0;
}

// Starts `kiln <args>`, waits until the store holds at least `records`, then SIGKILLs it.
// Returns the count at the kill, or -1 if the run ended first.
int64_t run_and_kill(const std::string& args, const std::string& db, int64_t records) {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c",
          (std::string("exec ") + KILN_BINARY + " " + args + " > /dev/null 2>&1").c_str(),
          (char*)nullptr);
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int64_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    seen = count_records(db);
    if (seen >= records) break;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return seen;
}

class ModelTuneCli : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }
  testing::TempDir dir_{"kiln-model-tune"};
};

TEST_F(ModelTuneCli, KilledTwiceThenResumedEndsWithItsBudgetAndCompiles) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  std::string db = path("mlp.db");
  std::string args = tune_args(db, "--trials 48");
  int64_t first = run_and_kill(args, db, 8);
  ASSERT_GE(first, 8) << "the tune made no progress or ended before the kill";
  int64_t second = run_and_kill(args, db, first + 8);
  ASSERT_GE(second, first);

  testing::CommandResult r = testing::run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("est. latency"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("48 trials in the store"), std::string::npos) << r.output;
  auto s = store::open_store(db);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE((*s)->check_integrity().ok());
  std::vector<store::Record> records = *(*s)->records();
  EXPECT_EQ(records.size(), 48u);
  // Three runs (two killed), each with its times: together, exactly the records they committed.
  auto times = (*s)->run_times();
  ASSERT_TRUE(times.ok()) << times.status().message();
  std::map<std::string, int64_t> trials_per_run;
  for (const store::RunTimes& t : *times) {
    trials_per_run[t.run] += t.trials;
    EXPECT_GT(t.wall_s, 0);
    EXPECT_GE(t.tuner_s(), -1e-6);
  }
  EXPECT_EQ(trials_per_run.size(), 3u);
  int64_t trials = 0;
  for (const auto& [run, n] : trials_per_run) trials += n;
  EXPECT_EQ(trials, 48);
  std::set<std::tuple<std::string, std::string, int64_t>> seen;
  for (const store::Record& rec : records) {
    EXPECT_TRUE(seen.insert({rec.task_name, rec.workload, rec.config_index}).second)
        << "measured twice: " << rec.task_name << " " << rec.workload << " " << rec.config_index;
  }

  // The tuned store compiles into a model that matches the reference.
  std::string model = path("mlp.kiln"), out = path("out.bin");
  r = testing::run_kiln("compile " + (kMlp / "mlp.onnx").string() + " --db " + db + " -o " + model);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("tuned"), std::string::npos) << r.output;
  r = testing::run_kiln("run " + model + " --input " + (kMlp / "input.bin").string() +
                        " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream y(out, std::ios::binary), ref(kMlp / "output.bin", std::ios::binary);
  std::vector<float> a(10), b(10);
  y.read(reinterpret_cast<char*>(a.data()), 40);
  ref.read(reinterpret_cast<char*>(b.data()), 40);
  double err = 0, scale = 0;
  for (int i = 0; i < 10; ++i) {
    err = testing::max_error(err, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  EXPECT_LE(err / scale, 1e-4);
}

// Every task's warm-up round measures its default config first (what `kiln compile` uses without
// a record), so that the store's best is never a worse choice than compiling without it. (A run
// killed with SIGKILL may leave that config leased by the dead run until the lease expires; this
// run is not killed.)
TEST_F(ModelTuneCli, EveryTaskMeasuresItsDefaultConfigFirst) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  std::string db = path("fallback.db");
  testing::CommandResult r = testing::run_kiln(tune_args(db, "--trials 12"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto s = store::open_store(db, /*read_only=*/true);
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<store::Record> records = *(*s)->records();
  ASSERT_EQ(records.size(), 12u);
  std::set<std::tuple<std::string, std::string, int64_t>> seen;
  for (const store::Record& rec : records)
    seen.insert({rec.task_name, rec.workload, rec.config_index});
  std::set<std::pair<std::string, std::string>> tasks;
  for (const store::Record& rec : records) tasks.insert({rec.task_name, rec.workload});
  EXPECT_EQ(tasks.size(), 6u);
  for (const auto& [name, workload_text] : tasks) {
    const ops::Template* tmpl = ops::find_template(name);
    ASSERT_NE(tmpl, nullptr);
    ops::Workload w = *tmpl->normalize(*ops::Workload::parse(workload_text));
    ConfigSpace space = tmpl->space(w);
    int64_t chosen =
        tmpl->default_config(w, space, describe(builder::host_target()).template_info()).index();
    EXPECT_TRUE(seen.count({name, workload_text, chosen})) << name << " " << workload_text;
  }
}

// Without timing options a model's tasks are timed as TVM tunes a model on a CPU (number 1,
// repeat 10, caches flushed before each repeat), said on the first lines and recorded with every
// trial; any timing option, --no-cache-flush included, gives the user's protocol instead.
TEST_F(ModelTuneCli, AModelIsTimedWithTheCachesFlushedUnlessTimingIsGiven) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  auto tune = [&](const std::string& db, const std::string& timing) {
    testing::CommandResult r =
        testing::run_kiln("tune " + (kMlp / "mlp.onnx").string() + " --db " + db +
                          " --trials 6 --tuner random --cooldown-interval 0 --seed 5 " + timing);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto s = store::open_store(db, /*read_only=*/true);
    EXPECT_TRUE(s.ok()) << s.status().message();
    std::vector<store::Record> records = s.ok() ? *(*s)->records() : std::vector<store::Record>{};
    EXPECT_EQ(records.size(), 6u);
    for (const store::Record& rec : records) {
      EXPECT_EQ(store::record_cache_flushed(rec), timing.empty()) << rec.measure_options;
    }
    return r.output;
  };
  EXPECT_HAS(tune(path("model.db"), ""),
             "timing: number 1, repeat 10, min_repeat_ms 0, caches flushed before each repeat");
  EXPECT_HAS(tune(path("warm.db"), "--no-cache-flush"),
             "timing: number 4, repeat 3, min_repeat_ms 0, caches kept warm");
  EXPECT_HAS(tune(path("number.db"), "--number 2"),
             "timing: number 2, repeat 3, min_repeat_ms 0, caches kept warm");
}

// The log (stdout not a terminal: a line whenever the task changes) gives an ETA once a trial is
// measured, says how many workloads the estimate covers until all are, and no status line is
// wider than 100 columns, however long the workload.
TEST_F(ModelTuneCli, LiveLinesHaveAnEtaAndFitIn100Columns) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  testing::CommandResult r = testing::run_kiln(tune_args(path("live.db"), "--trials 12"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  int status_lines = 0, with_eta = 0, partial = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("[")) continue;
    ++status_lines;
    EXPECT_LE(line.size(), 100u) << line;
    with_eta += line.find(", ETA ") != std::string::npos;
    partial += line.find(" of 3 workloads measured)") != std::string::npos;
  }
  EXPECT_GE(status_lines, 6) << r.output;  // one per round at least: 6 tasks
  EXPECT_GT(with_eta, 0) << r.output;
  EXPECT_GT(partial, 0) << r.output;
}

TEST_F(ModelTuneCli, TimeBudgetStopsAfterTheRunningBatch) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  std::string db = path("time.db");
  auto start = std::chrono::steady_clock::now();
  testing::CommandResult r = testing::run_kiln(tune_args(db, "--time 2s --trials-per-task 100000"));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("time budget of 2s reached"), std::string::npos) << r.output;
  EXPECT_GT(count_records(db), 0);
  EXPECT_LT(seconds, 60) << r.output;
}

// --time counts every run of the same command on the store, as a daemon job's budget does.
TEST_F(ModelTuneCli, TimeBudgetCountsTheEarlierRunsOfTheSameCommand) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  std::string db = path("again.db");
  testing::CommandResult first =
      testing::run_kiln(tune_args(db, "--time 2s --trials-per-task 100000"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("2s of tuning over every run of this command"), std::string::npos)
      << first.output;
  int64_t records = count_records(db);
  testing::CommandResult second =
      testing::run_kiln(tune_args(db, "--time 1s --trials-per-task 100000"));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("time budget of 1s already spent"), std::string::npos)
      << second.output;
  EXPECT_EQ(count_records(db), records);  // nothing tuned on
  // A budget larger than what was spent tunes on (here until two more trials), saying so.
  testing::CommandResult more =
      testing::run_kiln(tune_args(db, "--time 1h --trials " + std::to_string(records + 2)));
  ASSERT_EQ(more.exit_code, 0) << more.output;
  EXPECT_NE(more.output.find("spent before"), std::string::npos) << more.output;
}

TEST_F(ModelTuneCli, OpsFilterAndBadBudgetsAreCheckedUpFront) {
  if (!fs::exists(kMlp)) GTEST_SKIP() << "no " << kMlp;
  testing::CommandResult r = testing::run_kiln(tune_args(path("a.db"), "--trials 4 --ops conv2d"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no tunable task of --ops"), std::string::npos) << r.output;
  r = testing::run_kiln(tune_args(path("b.db"), "--trials 4 --ops softmax"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown operator 'softmax'"), std::string::npos) << r.output;
  r = testing::run_kiln(tune_args(path("c.db"), "--time 8x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--time"), std::string::npos) << r.output;
  r = testing::run_kiln("tune --workload dense:M=8,N=8,K=8 --time 1m --db " + path("d.db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run_kiln(tune_args(path("e.db"), "--trials 4 --loss hinge"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace kiln
