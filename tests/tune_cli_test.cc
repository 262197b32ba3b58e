// End to end: `kiln tune`, `kiln best`, `kiln export` and `kiln import` as real processes on
// real SQLite files, including a tune killed with SIGKILL mid-run and resumed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "store/open_store.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;

CommandResult kiln(const std::string& args) { return testing::run_kiln(args); }

class TuneCli : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }
  testing::TempDir dir_{"kiln-tune-cli"};
};

const char* kTune =
    "tune --workload dense:M=32,N=64,K=32 --template dense_pack.x86 --number 1 --repeat 1 "
    "--cooldown-interval 0 --seed 3";

int64_t count_records(const std::string& db) {
  auto s = store::open_store(db, /*read_only=*/true);
  if (!s.ok()) return -1;
  auto n = (*s)->count();
  return n.ok() ? *n : -1;
}

TEST_F(TuneCli, KilledMidRunThenResumedLosesAndDuplicatesNothing) {
  std::string db = path("kill.db");
  std::string args = std::string(kTune) + " --trials 80 --db " + db;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c",
          (std::string("exec ") + KILN_BINARY + " " + args + " > /dev/null 2>&1").c_str(),
          (char*)nullptr);
    _exit(127);
  }
  // Kill it once some batches are committed, well before the end.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int64_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    seen = fs::exists(db) ? count_records(db) : 0;
    if (seen >= 10) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(seen, 10) << "the tune made no progress";
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  std::vector<store::Record> before;
  {
    auto s = store::open_store(db);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_TRUE((*s)->check_integrity().ok());
    before = *(*s)->records();
  }
  ASSERT_LT(static_cast<int64_t>(before.size()), 80) << "killed too late to test anything";

  CommandResult r = kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(std::to_string(before.size()) + " resumed"), std::string::npos)
      << r.output;
  auto s = store::open_store(db);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE((*s)->check_integrity().ok());
  std::vector<store::Record> after = *(*s)->records();
  EXPECT_EQ(after.size(), 80u);  // the requested trial count, completed
  std::set<int64_t> indices;
  for (const auto& rec : after)
    EXPECT_TRUE(indices.insert(rec.config_index).second) << rec.config_index;
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]);  // nothing lost
}

TEST_F(TuneCli, EveryTunerRunsAndAnUnknownOneIsNamed) {
  for (const char* tuner : {"xgb-knob", "xgb-curve", "xgb-reg", "ga", "grid", "random"}) {
    std::string db = path(std::string(tuner) + ".db");
    CommandResult r =
        kiln(std::string(kTune) + " --trials 12 --no-transfer --tuner " + tuner + " --db " + db);
    EXPECT_EQ(r.exit_code, 0) << tuner << ": " << r.output;
    EXPECT_EQ(count_records(db), 12) << tuner;
  }
  CommandResult bad = kiln(std::string(kTune) + " --tuner annealing --db " + path("bad.db"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("unknown tuner 'annealing'"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("xgb"), std::string::npos) << bad.output;
}

TEST_F(TuneCli, ExportTvmImportBackSameBest) {
  std::string db = path("a.db");
  CommandResult r = kiln(std::string(kTune) + " --trials 12 --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("s/trial"), std::string::npos) << r.output;  // the time split
  EXPECT_NE(r.output.find("build"), std::string::npos);

  std::string log = path("tvm.log");
  r = kiln("export --db " + db + " --format tvm -o " + log);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(log);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);  // throws if not JSON
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    EXPECT_EQ(keys,
              (std::vector<std::string>{"input", "config", "result", "version", "tvm_version"}));
    EXPECT_EQ(j["input"][1], "dense_pack.x86");
    EXPECT_EQ(j["input"][3], nlohmann::ordered_json::object());
    std::vector<std::string> config_keys;
    for (auto it = j["config"].begin(); it != j["config"].end(); ++it)
      config_keys.push_back(it.key());
    EXPECT_EQ(config_keys, (std::vector<std::string>{"index", "code_hash", "entity"}));
    EXPECT_EQ(j["result"].size(), 4u);
    EXPECT_NE(line.find("\"version\": 0.2"), std::string::npos);  // Python's separators
  }
  EXPECT_EQ(lines, 12);

  std::string db2 = path("b.db");
  r = kiln("import " + log + " --db " + db2);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("imported 12 records"), std::string::npos) << r.output;
  CommandResult best_a = kiln("best --db " + db + " --json");
  CommandResult best_b = kiln("best --db " + db2 + " --json");
  auto a = nlohmann::json::parse(best_a.output), b = nlohmann::json::parse(best_b.output);
  EXPECT_EQ(a["config_index"], b["config_index"]);
  EXPECT_EQ(a["entity"], b["entity"]);
  EXPECT_EQ(a["mean_cost_s"], b["mean_cost_s"]);
}

TEST_F(TuneCli, MalformedLogLinesAreSkippedWithTheirLineNumber) {
  std::string log = path("bad.log");
  std::ofstream(log)
      << "{\"input\": [\"llvm -keys=cpu \", \"dense_pack.x86\"\n"  // truncated
      << "{\"input\": [\"llvm -keys=cpu \", \"no_such_task.x86\", [], {}], \"config\": {\"index\": "
         "0, "
         "\"code_hash\": null, \"entity\": []}, \"result\": [[1.0], 0, 1.0, 1.0], \"version\": "
         "0.2, "
         "\"tvm_version\": \"0.16.0\"}\n"
      << "{\"input\": [\"llvm -keys=cpu \", \"dense_nopack.x86\", [[\"TENSOR\", [1, 512], "
         "\"float32\"], "
         "[\"TENSOR\", [1000, 512], \"float32\"], null, \"float32\"], {}], \"config\": {\"index\": "
         "68, "
         "\"code_hash\": null, \"entity\": [[\"tile_y\", \"sp\", [-1, 1]], [\"tile_x\", \"sp\", "
         "[-1, 7]], "
         "[\"tile_k\", \"sp\", [-1, 16]]]}, \"result\": [[2.1e-05], 0, 0.84, 1700000000.0], "
         "\"version\": 0.2, \"tvm_version\": \"0.16.0\"}\n"  // [-1, 7] is not an entity of tile_x
      << "{\"input\": [\"llvm -keys=cpu \", \"dense_nopack.x86\", [[\"TENSOR\", [1, 512], "
         "\"float32\"], "
         "[\"TENSOR\", [1000, 512], \"float32\"], null, \"float32\"], {}], \"config\": {\"index\": "
         "68, "
         "\"code_hash\": null, \"entity\": [[\"tile_y\", \"sp\", [-1, 1]], [\"tile_x\", \"sp\", "
         "[-1, 8]], "
         "[\"tile_k\", \"sp\", [-1, 16]]]}, \"result\": [[2.1e-05], 0, 0.84, 1700000000.0], "
         "\"version\": 0.2, \"tvm_version\": \"0.16.0\"}\n";  // valid
  CommandResult r = kiln("import " + log + " --db " + path("c.db"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("bad.log:1:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bad.log:2:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bad.log:3:"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("bad.log:4:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("imported 1 records"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kiln
