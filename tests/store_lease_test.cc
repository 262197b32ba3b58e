// Schema versions 2 and 3 of the SQLite store: records carry their measure options and whether
// the runner was lost (kept through a migration from version 1 and through kiln logs). The
// leases themselves (taken, refused, renewed, released, expired) are in the conformance suite,
// store_conformance_test.cc.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "store/formats/kiln_log.h"
#include "store/open_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

namespace fs = std::filesystem;

using kiln::testing::TempDir;

const TaskKey kTask{"llvm", "dense_pack.x86", "dense:K=16,M=16,N=32"};

Record make_record(int64_t index, int error_no = 0) {
  Record r;
  r.target = kTask.target;
  r.task_name = kTask.task_name;
  r.workload = kTask.workload;
  r.config_index = index;
  r.entities = nlohmann::json::array({nlohmann::json::array({"tile_y", "sp", {-1, index + 1}})});
  r.error_no = error_no;
  if (error_no == 0) r.costs = {1e-3};
  r.all_cost = 0.5;
  r.timestamp = 1700000000.0 + static_cast<double>(index);
  r.error_msg = error_no == 0 ? "" : "it broke";
  r.flop = 1e6;
  r.source = "test";
  return r;
}

std::unique_ptr<Store> open_or_die(const std::string& path) {
  auto store = open_store(path);
  EXPECT_TRUE(store.ok()) << store.status().message();
  return store.ok() ? std::move(store).value() : nullptr;
}

TEST(MeasureOptionsTest, CanonicalFormSortsKeysAndRejectsWhatIsNotAnOption) {
  auto text = canonical_measure_options({{"repeat", 3}, {"number", 4}, {"cache_flush", false}});
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, R"({"cache_flush":false,"number":4,"repeat":3})");
  EXPECT_FALSE(canonical_measure_options(nlohmann::json::array({1})).ok());
  EXPECT_FALSE(canonical_measure_options({{"nested", {{"a", 1}}}}).ok());
  EXPECT_FALSE(canonical_measure_options({{"t", std::nan("")}}).ok());
}

TEST(MeasureOptionsTest, EnvironmentalFailuresAreTimeoutsAndLostRunners) {
  Record r = make_record(0, static_cast<int>(MeasureError::kRunTimeout));
  EXPECT_TRUE(is_environmental_failure(r));
  r.error_no = static_cast<int>(MeasureError::kBuildTimeout);
  EXPECT_TRUE(is_environmental_failure(r));
  r.error_no = static_cast<int>(MeasureError::kRuntimeDevice);
  EXPECT_FALSE(is_environmental_failure(r));  // the kernel crashed: the config's fault
  r.runner_lost = true;
  EXPECT_TRUE(is_environmental_failure(r));
  for (MeasureError config_fault :
       {MeasureError::kNoError, MeasureError::kWrongAnswer, MeasureError::kCompileHost}) {
    EXPECT_FALSE(is_environmental_failure(make_record(0, static_cast<int>(config_fault))));
  }
}

TEST(MeasureOptionsTest, StoredAndLoggedWithEachRecordAndValidated) {
  TempDir dir;
  auto store = open_or_die(dir.file("r.db"));
  ASSERT_TRUE(store);
  Record timed = make_record(1);
  timed.measure_options = R"({"number":1,"run_timeout_s":0.5})";
  Record lost = make_record(2, static_cast<int>(MeasureError::kRuntimeDevice));
  lost.runner_lost = true;
  ASSERT_TRUE(store->append({timed, lost, make_record(3)}).ok());
  auto back = store->records();
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[0].measure_options, timed.measure_options);
  EXPECT_TRUE((*back)[1].runner_lost);
  EXPECT_EQ((*back)[2].measure_options, "");  // unknown
  EXPECT_FALSE((*back)[2].runner_lost);

  // Through kiln's own log format, both ways (a log line must hold a real config of the task).
  const ops::Template* tmpl = ops::find_template(kTask.task_name);
  ops::Workload workload = *tmpl->normalize(*ops::Workload::parse(kTask.workload));
  ConfigSpace space = tmpl->space(workload);
  for (Record r : *back) {
    r.workload = workload.to_string();
    r.entities = space.get(r.config_index).to_json()["entity"];
    auto line = to_kiln_line(r);
    ASSERT_TRUE(line.ok()) << line.status().message();
    auto parsed = parse_kiln_line(*line);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << *line;
    EXPECT_EQ(parsed->record.measure_options, r.measure_options) << *line;
    EXPECT_EQ(parsed->record.runner_lost, r.runner_lost) << *line;
  }

  Record not_canonical = make_record(4);
  not_canonical.measure_options = R"({"repeat":3, "number":4})";
  Record lost_but_ok = make_record(5);
  lost_but_ok.runner_lost = true;
  for (const Record& bad : {not_canonical, lost_but_ok}) {
    Status s = store->append({bad});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(bad.runner_lost ? "runner_lost" : "measure_options"),
              std::string::npos)
        << s.message();
  }
  EXPECT_EQ(*store->count(), 3);
}

TEST(SchemaMigrationTest, VersionOneStoreMigratesKeepingEveryRecord) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  {
    // A store as the first kiln wrote it: version 1, with records.
    auto db = sqlite::Database::open(path, false, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(migrate(**db, {schema_migrations().front()}).ok());
    ASSERT_EQ(*(*db)->query_int("PRAGMA user_version"), 1);
    for (int i = 0; i < 5; ++i) {
      std::string error_no = i % 2 == 0 ? "0" : "7";
      std::string costs = i % 2 == 0 ? "[0.001]" : "[]";
      std::string mean = i % 2 == 0 ? "0.001" : "NULL";
      ASSERT_TRUE((*db)
                      ->exec("INSERT INTO records (target, task_name, workload, config_index, "
                             "entities, error_no, costs, mean_cost, all_cost, timestamp, "
                             "error_msg, flop, source) VALUES ('llvm', 'dense_pack.x86', "
                             "'dense:K=16,M=16,N=32', " +
                             std::to_string(i) + ", '[]', " + error_no + ", '" + costs + "', " +
                             mean + ", 0.5, 1700000000, '', 1000000, 'old kiln')")
                      .ok());
    }
  }
  auto store = open_or_die(path);
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->schema_version(), latest_schema_version());
  auto records = store->records();
  ASSERT_TRUE(records.ok()) << records.status().message();
  ASSERT_EQ(records->size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const Record& r = (*records)[i];
    EXPECT_EQ(r.config_index, i);
    EXPECT_EQ(r.error_no, i % 2 == 0 ? 0 : 7);
    EXPECT_EQ(r.source, "old kiln");
    EXPECT_EQ(r.measure_options, "");  // unknown: measured before kiln recorded them
    EXPECT_FALSE(r.runner_lost);
  }
  auto best = store->best("llvm", "dense_pack.x86", "dense:K=16,M=16,N=32");
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->config_index, 0);
  // Still append-only after the migration, and usable: new records and leases.
  auto db = sqlite::Database::open(path, false, 1000);
  EXPECT_FALSE((*db)->exec("DELETE FROM records").ok());
  EXPECT_FALSE((*db)->exec("UPDATE records SET error_no = 0").ok());
  EXPECT_TRUE(store->append({make_record(9)}).ok());
  EXPECT_TRUE(store->claim(kTask, {10}, 0, "me", 0, 100).ok());
  EXPECT_EQ(*store->count(), 6);
}

}  // namespace
}  // namespace kiln::store
