// Schema version 6 of the SQLite store: the migration of a version 5 store to the run_times table
// keeps every record and job. Run times' additions, reads and refusals are in the conformance
// suite, store_conformance_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "store/open_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/store_samples.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

using kiln::testing::make_run_times;
using kiln::testing::TempDir;

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
    EXPECT_EQ(*(*reader)->schema_version(), latest_schema_version());
    EXPECT_TRUE((*reader)->run_times()->empty());
  }

  auto store = open_store(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*(*store)->schema_version(), latest_schema_version());
  EXPECT_EQ(*(*store)->count(), 1);
  EXPECT_TRUE((*store)->run_times()->empty());
  ASSERT_TRUE((*store)->add_run_times(make_run_times("r", "dense:K=16,M=16,N=32", 1)).ok());
  auto db = sqlite::Database::open(path, true, 1000);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM jobs"), 1);
  EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM run_times"), 1);
}

}  // namespace
}  // namespace kiln::store
