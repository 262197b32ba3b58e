// Schema versions 2 and 3 of the record store: records carry their measure options and whether
// the runner was lost (kept through a migration from version 1 and through kiln logs), and
// leases let concurrent tuners claim configs (taken, refused, renewed, released, expired).
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

TEST(LeaseTest, AnotherOwnersLeaseBlocksUntilItExpires) {
  TempDir dir;
  auto store = open_or_die(dir.file("r.db"));
  ASSERT_TRUE(store);
  // "dead" claims at t=1000 for 60 s and never comes back.
  auto dead = store->claim(kTask, {1, 2, 3}, 0, "dead", 1000, 1060);
  ASSERT_TRUE(dead.ok()) << dead.status().message();
  EXPECT_EQ(dead->claimed, (std::vector<int64_t>{1, 2, 3}));

  auto early = store->claim(kTask, {2, 3, 4}, 0, "alive", 1030, 1090);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->claimed, (std::vector<int64_t>{4}));  // 2 and 3 are held

  auto late = store->claim(kTask, {1, 2}, 0, "alive", 1060, 1120);  // expiry is inclusive
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->claimed, (std::vector<int64_t>{1, 2}));
  // The expired leases were dropped; "alive" holds 1, 2 and 4 until 1120 (4 from before, 1090).
  auto leases = store->leases(kTask);
  ASSERT_TRUE(leases.ok());
  EXPECT_EQ(*leases,
            (std::vector<Lease>{{1, "alive", 1120}, {2, "alive", 1120}, {4, "alive", 1090}}));
  // Renewal extends every lease of the owner; another task's configs are separate.
  ASSERT_TRUE(store->renew_leases("alive", 2000).ok());
  TaskKey other = kTask;
  other.workload = "dense:K=16,M=16,N=64";
  auto elsewhere = store->claim(other, {1}, 0, "dead", 1500, 1560);
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_EQ(elsewhere->claimed, (std::vector<int64_t>{1}));
  auto blocked = store->claim(kTask, {1, 4}, 0, "dead", 1999, 2100);
  ASSERT_TRUE(blocked.ok());
  EXPECT_TRUE(blocked->claimed.empty());
  // The owner's own lease is renewed by claiming it again.
  auto mine = store->claim(kTask, {4}, 0, "alive", 1999, 3000);
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->claimed, (std::vector<int64_t>{4}));
}

TEST(LeaseTest, ClaimSeesRecordsAppendedSinceAndAppendReleasesOnlyTheOwnersLeases) {
  TempDir dir;
  auto store = open_or_die(dir.file("r.db"));
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->claim(kTask, {1, 2}, 0, "a", 0, 100).ok());
  ASSERT_TRUE(store->claim(kTask, {3}, 0, "b", 0, 100).ok());
  // "a" records 1 and 2 (releasing them); "b"'s lease on 3 survives a record of 3 by "a".
  ASSERT_TRUE(store->append({make_record(1), make_record(2), make_record(3)}, "a").ok());
  auto leases = store->leases(kTask);
  ASSERT_TRUE(leases.ok());
  EXPECT_EQ(*leases, (std::vector<Lease>{{3, "b", 100}}));

  auto seen = store->claim(kTask, {1, 5}, 0, "b", 10, 100);
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->unseen.size(), 3u);  // what was recorded after id 0
  EXPECT_EQ(seen->unseen[0].config_index, 1);
  // 1 is free to claim (the caller decides it is done and releases it).
  EXPECT_EQ(seen->claimed, (std::vector<int64_t>{1, 5}));
  ASSERT_TRUE(store->release_leases(kTask, {1}, "b").ok());
  auto after = store->claim(kTask, {}, seen->unseen.back().id, "b", 10, 100);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->unseen.empty());
  EXPECT_EQ(*store->leases(kTask), (std::vector<Lease>{{3, "b", 100}, {5, "b", 100}}));

  auto read_only = open_store(dir.file("r.db"), /*read_only=*/true);
  ASSERT_TRUE(read_only.ok());
  EXPECT_FALSE((*read_only)->claim(kTask, {7}, 0, "c", 0, 1).ok());
}

}  // namespace
}  // namespace kiln::store
