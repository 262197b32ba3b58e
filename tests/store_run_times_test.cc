// Schema version 6 of the record store: the run_times table (store/run_times.h), its additions,
// its reads, its refusals, and the migration of a version 5 store that keeps every record.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "store/open_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

using kiln::testing::TempDir;

RunTimes delta(const std::string& run, const std::string& workload, double seconds) {
  RunTimes t;
  t.run = run;
  t.target = "llvm";
  t.task_name = "dense_pack.x86";
  t.workload = workload;
  t.source = "kiln tune";
  t.started = 1700000000;
  t.updated = 1700000000 + seconds;
  t.trials = 4;
  t.errors = 1;
  t.build_s = seconds;
  t.run_s = 2 * seconds;
  t.cooldown_s = 0.5 * seconds;
  t.store_s = 0.1 * seconds;
  t.wall_s = 4 * seconds;
  return t;
}

TEST(RunTimesStore, AdditionsToOneRunAndTaskSumInOneRow) {
  TempDir dir;
  auto store = open_store(dir.file("r.db"));
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE((*store)->add_run_times(delta("run-a", "dense:K=8,M=8,N=8", 1)).ok());
  RunTimes later = delta("run-a", "dense:K=8,M=8,N=8", 2);
  later.started = 1700000099;  // ignored: the row keeps its first start
  ASSERT_TRUE((*store)->add_run_times(later).ok());
  ASSERT_TRUE((*store)->add_run_times(delta("run-a", "dense:K=16,M=8,N=8", 1)).ok());
  RunTimes other = delta("run-b", "dense:K=8,M=8,N=8", 1);
  other.source = "kiln serve job 3";
  ASSERT_TRUE((*store)->add_run_times(other).ok());

  auto rows = (*store)->run_times();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);
  const RunTimes& first = (*rows)[0];
  EXPECT_EQ(first.run, "run-a");
  EXPECT_EQ(first.workload, "dense:K=8,M=8,N=8");
  EXPECT_EQ(first.started, 1700000000);
  EXPECT_EQ(first.updated, 1700000002);
  EXPECT_EQ(first.trials, 8);
  EXPECT_EQ(first.errors, 2);
  EXPECT_DOUBLE_EQ(first.build_s, 3);
  EXPECT_DOUBLE_EQ(first.run_s, 6);
  ASSERT_TRUE(first.cooldown_s.has_value());
  EXPECT_DOUBLE_EQ(*first.cooldown_s, 1.5);
  EXPECT_DOUBLE_EQ(first.wall_s, 12);
  EXPECT_DOUBLE_EQ(first.tuner_s(), 12 - 3 - 6 - 0.3);

  auto of_job = (*store)->run_times(std::string("kiln serve job 3"));
  ASSERT_TRUE(of_job.ok());
  ASSERT_EQ(of_job->size(), 1u);
  EXPECT_EQ(of_job->front().run, "run-b");
}

TEST(RunTimesStore, CooldownStaysUnknownUntilARunnerKnowsIt) {
  TempDir dir;
  auto store = open_store(dir.file("r.db"));
  ASSERT_TRUE(store.ok());
  RunTimes farm = delta("farm-run", "dense:K=8,M=8,N=8", 1);
  farm.cooldown_s.reset();
  ASSERT_TRUE((*store)->add_run_times(farm).ok());
  ASSERT_TRUE((*store)->add_run_times(farm).ok());
  auto rows = (*store)->run_times();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_FALSE(rows->front().cooldown_s.has_value());
  EXPECT_DOUBLE_EQ(rows->front().run_s, 4);
}

TEST(RunTimesStore, RefusesBadNumbersAnonymousRunsAndReadOnlyStores) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  auto store = open_store(path);
  ASSERT_TRUE(store.ok());
  RunTimes bad = delta("run", "dense:K=8,M=8,N=8", 1);
  bad.run_s = std::numeric_limits<double>::quiet_NaN();
  Status s = (*store)->add_run_times(bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("run_s"), std::string::npos) << s.message();
  bad = delta("run", "dense:K=8,M=8,N=8", 1);
  bad.trials = -1;
  EXPECT_NE((*store)->add_run_times(bad).message().find("trials"), std::string::npos);
  EXPECT_FALSE((*store)->add_run_times(delta("", "dense:K=8,M=8,N=8", 1)).ok());
  EXPECT_TRUE((*store)->run_times()->empty());

  auto reader = open_store(path, /*read_only=*/true);
  ASSERT_TRUE(reader.ok());
  s = (*reader)->add_run_times(delta("run", "dense:K=8,M=8,N=8", 1));
  EXPECT_NE(s.message().find("read-only"), std::string::npos) << s.message();
}

TEST(RunTimesStore, AppendAddsTheRunsTimesInTheBatchsTransaction) {
  TempDir dir;
  auto store = open_store(dir.file("r.db"));
  ASSERT_TRUE(store.ok());
  Record r;
  r.target = "llvm";
  r.task_name = "dense_pack.x86";
  r.workload = "dense:K=8,M=8,N=8";
  r.entities = nlohmann::json::array();
  r.costs = {1e-3};
  r.flop = 1e6;
  r.source = "kiln tune";
  RunTimes t = delta("run", r.workload, 1);
  ASSERT_TRUE((*store)->append({r, r}, "", &t).ok());
  auto rows = (*store)->run_times();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().trials, 4);  // as given: the caller counts its batch
  // A refused batch adds no time either, and bad times refuse the batch.
  Record bad = r;
  bad.error_no = 42;
  EXPECT_FALSE((*store)->append({r, bad}, "", &t).ok());
  RunTimes nan_times = t;
  nan_times.wall_s = std::nan("");
  EXPECT_FALSE((*store)->append({r}, "", &nan_times).ok());
  EXPECT_EQ(*(*store)->count(), 2);
  EXPECT_EQ((*store)->run_times()->front().trials, 4);
}

TEST(RunTimesStore, VersionFiveStoreMigratesKeepingEveryRecordAndJob) {
  TempDir dir;
  const std::string path = dir.file("v5.db");
  {
    auto db = sqlite::Database::open(path, false, 1000);
    ASSERT_TRUE(db.ok());
    std::vector<Migration> up_to_5(schema_migrations().begin(), schema_migrations().begin() + 5);
    ASSERT_EQ(up_to_5.back().version, 5);
    ASSERT_TRUE(migrate(**db, up_to_5).ok());
    ASSERT_TRUE((*db)
                    ->exec("INSERT INTO records (target, task_name, workload, config_index, "
                           "entities, error_no, costs, mean_cost, all_cost, timestamp, error_msg, "
                           "flop, source) VALUES ('llvm', 'dense_pack.x86', "
                           "'dense:K=16,M=16,N=32', 3, '[]', 0, '[0.001]', 0.001, 0.5, "
                           "1700000000, '', 1000000, 'kiln serve job 1')")
                    .ok());
    ASSERT_TRUE((*db)
                    ->exec("INSERT INTO jobs (name, spec, base_dir, priority, state, submitted, "
                           "updated) VALUES ('j', 'model: m.onnx', '/tmp', 0, 'running', 1, 1)")
                    .ok());
  }
  // A read-only open (kiln report) of the writable file migrates it first.
  {
    auto reader = open_store(path, /*read_only=*/true);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    EXPECT_EQ(*(*reader)->schema_version(), 6);
    EXPECT_TRUE((*reader)->run_times()->empty());
  }

  auto store = open_store(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*(*store)->schema_version(), 6);
  EXPECT_EQ(*(*store)->count(), 1);
  EXPECT_TRUE((*store)->run_times()->empty());
  ASSERT_TRUE((*store)->add_run_times(delta("r", "dense:K=16,M=16,N=32", 1)).ok());
  auto db = sqlite::Database::open(path, true, 1000);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM jobs"), 1);
  EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM run_times"), 1);
}

}  // namespace
}  // namespace kiln::store
