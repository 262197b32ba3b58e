// The jobs table (store/job_store.h) and the migration that adds it.
#include <gtest/gtest.h>

#include "store/job_store.h"
#include "store/open_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

using kiln::testing::TempDir;

Record record_of(const std::string& source, int64_t config) {
  Record r;
  r.target = "llvm -mcpu=znver5";
  r.task_name = "dense_pack.x86";
  r.workload = "dense:K=16,M=16,N=16";
  r.config_index = config;
  r.entities = nlohmann::json::array();
  r.error_no = 0;
  r.costs = {1e-3};
  r.all_cost = 0.1;
  r.timestamp = 1;
  r.flop = 8192;
  r.source = source;
  return r;
}

TEST(JobStoreTest, AddGetListAndStates) {
  TempDir dir;
  auto jobs = open_job_store(dir.file("k.db"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  Result<int64_t> a = (*jobs)->add("a", "workloads: []", "/tmp", 3, 100);
  Result<int64_t> b = (*jobs)->add("b", "x: 1", "", -1, 101);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(*a, *b);
  Result<JobRow> row = (*jobs)->get(*a);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->name, "a");
  EXPECT_EQ(row->spec, "workloads: []");
  EXPECT_EQ(row->base_dir, "/tmp");
  EXPECT_EQ(row->priority, 3);
  EXPECT_EQ(row->state, JobState::kQueued);
  EXPECT_EQ(row->submitted, 100);

  ASSERT_TRUE((*jobs)->set_state(*a, JobState::kRunning, "", 102).ok());
  ASSERT_TRUE((*jobs)->add_seconds(*a, 1.5, 103).ok());
  ASSERT_TRUE((*jobs)->add_seconds(*a, 2.0, 104).ok());
  row = (*jobs)->get(*a);
  EXPECT_EQ(row->state, JobState::kRunning);
  EXPECT_DOUBLE_EQ(row->seconds, 3.5);
  EXPECT_EQ(row->updated, 104);

  // A daemon starting again queues what was running.
  EXPECT_EQ(*(*jobs)->requeue_running(105), 1);
  EXPECT_EQ((*jobs)->get(*a)->state, JobState::kQueued);

  ASSERT_TRUE((*jobs)->set_state(*b, JobState::kFailed, "model gone", 106).ok());
  Result<std::vector<JobRow>> all = (*jobs)->list();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].reason, "model gone");
  EXPECT_TRUE(is_final((*all)[1].state));

  EXPECT_FALSE((*jobs)->get(99).ok());
  EXPECT_FALSE(*(*jobs)->exists(99));
  EXPECT_TRUE(*(*jobs)->exists(*a));
  EXPECT_FALSE((*jobs)->set_state(99, JobState::kDone, "", 1).ok());
  EXPECT_FALSE((*jobs)->add_seconds(99, 1, 1).ok());
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kPaused, JobState::kDone,
                     JobState::kFailed, JobState::kCancelled}) {
    EXPECT_EQ(parse_job_state(job_state_name(s)), s);
  }
  EXPECT_EQ(parse_job_state("sleeping"), std::nullopt);
}

TEST(JobStoreTest, CountsAJobsRecordsExactly) {
  TempDir dir;
  const std::string path = dir.file("k.db");
  auto jobs = open_job_store(path);
  auto records = open_store(path);
  ASSERT_TRUE(jobs.ok() && records.ok());
  int64_t a = *(*jobs)->add("a", "s", "", 0, 1);
  int64_t b = *(*jobs)->add("b", "s", "", 0, 1);
  ASSERT_TRUE((*records)
                  ->append({record_of(job_source(a), 0), record_of(job_source(a), 1),
                            record_of(job_source(b), 2), record_of("kiln tune", 3)})
                  .ok());
  EXPECT_EQ(*(*jobs)->count_records(a), 2);
  EXPECT_EQ(*(*jobs)->count_records(b), 1);
  RecordFilter f;
  f.source = job_source(a);
  EXPECT_EQ(*(*records)->count(f), 2);
}

TEST(JobStoreTest, AVersion4StoreMigratesKeepingItsRecords) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    auto db = sqlite::Database::open(path, false, 1000);
    ASSERT_TRUE(db.ok());
    std::vector<Migration> v4(schema_migrations().begin(), schema_migrations().begin() + 4);
    ASSERT_EQ(v4.back().version, 4);
    ASSERT_TRUE(migrate(**db, v4).ok());
    ASSERT_TRUE((*db)
                    ->exec("INSERT INTO records (target, task_name, workload, config_index, "
                           "entities, error_no, costs, mean_cost, all_cost, timestamp, "
                           "error_msg, flop, source) VALUES ('llvm', 'dense_pack.x86', "
                           "'dense:K=1,M=1,N=1', 0, '[]', 0, '[1]', 1, 1, 1, '', 1, 'old')")
                    .ok());
  }
  auto jobs = open_job_store(path);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  auto records = open_store(path);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(*(*records)->schema_version(), latest_schema_version());  // migrated to the last
  EXPECT_EQ(*(*records)->count(), 1);
  EXPECT_TRUE((*jobs)->add("j", "s", "", 0, 1).ok());
  EXPECT_TRUE((*records)->check_integrity().ok());
}

// kiln report reads jobs beside a running daemon: a read-only open reads, never writes, and
// never creates a store.
TEST(JobStoreTest, ReadOnlyOpenReadsJobsAndRefusesToWrite) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  EXPECT_FALSE(open_job_store(path, /*read_only=*/true).ok());
  {
    auto jobs = open_job_store(path);
    ASSERT_TRUE(jobs.ok());
    ASSERT_TRUE((*jobs)->add("j", "spec", "/d", 3, 1).ok());
  }
  auto reader = open_job_store(path, /*read_only=*/true);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto row = (*reader)->get(1);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->name, "j");
  EXPECT_EQ(row->priority, 3);
  EXPECT_FALSE((*reader)->add("k", "spec", "/d", 0, 2).ok());
  EXPECT_EQ((*reader)->list()->size(), 1u);
}

}  // namespace
}  // namespace kiln::store
