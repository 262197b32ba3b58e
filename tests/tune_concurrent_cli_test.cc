// End to end, real `kiln tune` processes on real SQLite files: two tuners of one task started
// at once never measure a config twice, and resuming measures timeouts recorded under unknown
// options again (and, with --retry-errors, every failure) without deleting any record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include "builder/target.h"
#include "ops/registry.h"
#include "store/open_store.h"
#include "tests/run_kiln.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

class TuneConcurrentCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln-tune-concurrent-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

const char* kTune =
    "tune --workload dense:M=32,N=64,K=32 --template dense_pack.x86 --number 1 --repeat 1 "
    "--cooldown-interval 0 --no-transfer";

std::vector<store::Record> all_records(const std::string& db) {
  auto s = store::open_store(db, /*read_only=*/true);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  auto records = (*s)->records();
  return records.ok() ? *records : std::vector<store::Record>{};
}

TEST_F(TuneConcurrentCli, TwoTunersOnOneStoreNeverMeasureAConfigTwice) {
  std::string db = path("shared.db");
  // The same seed: without claims both would propose, and measure, the same configs.
  std::string args = std::string(kTune) + " --tuner random --seed 5 --trials 12 --db " + db;
  testing::CommandResult a, b;
  std::thread first([&] { a = testing::run_kiln(args); });
  std::thread second([&] { b = testing::run_kiln(args); });
  first.join();
  second.join();
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  std::vector<store::Record> records = all_records(db);
  std::set<int64_t> distinct;
  for (const store::Record& r : records) distinct.insert(r.config_index);
  EXPECT_EQ(distinct.size(), records.size()) << a.output << b.output;
  // How many each measures depends on timing: a run counts the other's trials toward its budget
  // only when they are recorded before it claims (and it claims up to build_ahead batches early).
  EXPECT_GE(records.size(), 12u);
  EXPECT_LE(records.size(), 24u);
}

TEST_F(TuneConcurrentCli, ResumeMeasuresTimeoutsAgainAndRetryErrorsEveryFailure) {
  std::string db = path("failures.db");
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ops::Workload workload = *tmpl->normalize(*ops::Workload::parse("dense:M=32,N=64,K=32"));
  ConfigSpace space = tmpl->space(workload);
  {
    // What `kiln tune --timeout 1e-9` of an older kiln left: timeouts, with unknown options,
    // and two configs that are wrong whatever the options.
    auto s = store::open_store(db);
    ASSERT_TRUE(s.ok()) << s.status().message();
    std::vector<store::Record> old;
    for (int64_t index : {0, 1, 2, 3}) {
      store::Record r;
      r.target = builder::parse_target("llvm")->to_string();
      r.task_name = std::string(tmpl->name());
      r.workload = workload.to_string();
      r.config_index = index;
      r.entities = space.get(index).to_json()["entity"];
      r.error_no =
          static_cast<int>(index < 2 ? MeasureError::kRunTimeout : MeasureError::kWrongAnswer);
      r.timestamp = 1700000000;
      r.error_msg = "old";
      r.source = "old";
      old.push_back(r);
    }
    ASSERT_TRUE((*s)->append(old).ok());
  }
  std::string args = std::string(kTune) + " --tuner grid --trials 4 --db " + db;
  testing::CommandResult r = testing::run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 resumed from the store, 2 new, of which 2 measured again"),
            std::string::npos)
      << r.output;
  r = testing::run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 resumed from the store, 0 new)"), std::string::npos) << r.output;
  r = testing::run_kiln(args + " --retry-errors");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 resumed from the store, 2 new, of which 2 measured again"),
            std::string::npos)
      << r.output;
  std::vector<store::Record> records = all_records(db);
  ASSERT_EQ(records.size(), 8u);  // the 4 old ones kept, each config measured once more
  std::multiset<int64_t> per_config;
  for (const store::Record& rec : records) per_config.insert(rec.config_index);
  for (int64_t index : {0, 1, 2, 3}) EXPECT_EQ(per_config.count(index), 2u) << index;
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(records[i].source, "old");
}

}  // namespace
}  // namespace kiln
