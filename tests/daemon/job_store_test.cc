// The SQLite jobs table: the migration that adds it (what every JobStore does is in
// tests/store_conformance_test.cc).
#include "store/job_store.h"

#include <gtest/gtest.h>

#include "store/open_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

using kiln::testing::TempDir;

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

}  // namespace
}  // namespace kiln::store
