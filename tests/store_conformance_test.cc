// The conformance suite of the store interface (store/store.h, store/job_store.h): what every
// backend must do, run through open_store / open_job_store on a new, empty store of each backend:
// round trips, filters, best-config queries and AutoTVM's tie rule, whole-batch refusals, leases
// (taken, refused, renewed, released, expired), run times and the daemon's jobs. A new backend
// adds one INSTANTIATE_TEST_SUITE_P line at the end. What only one backend has (SQLite's schema,
// PRAGMAs, file locking, read-only media) is tested beside it (store_test.cc and others).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "store/job_store.h"
#include "store/open_store.h"
#include "tests/postgres/pg_server.h"
#include "tests/store_samples.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

using kiln::testing::make_record;
using kiln::testing::make_run_times;
using kiln::testing::TempDir;

// A backend under test.
struct StoreBackend {
  std::string name;
  // The location (path or URL) of a new, empty store, for a test that owns `dir`; empty when
  // the backend cannot be tested here (skip_reason says why).
  std::function<std::string(const TempDir& dir)> new_store;
  std::function<std::string()> skip_reason = [] { return std::string(); };
};

class StoreConformance : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    if (location_.empty()) GTEST_SKIP() << GetParam().skip_reason();
  }

  std::unique_ptr<Store> open_or_die(const std::string& location) {
    auto store = open_store(location);
    EXPECT_TRUE(store.ok()) << store.status().message();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  TempDir dir_;
  const std::string location_ = GetParam().new_store(dir_);
};

const TaskKey kTask{"llvm", "dense_pack.x86", "dense:K=16,M=16,N=32"};

// A successful record of kTask.
Record lease_record(int64_t index) {
  return make_record(kTask.workload, index, {1e-3}, 0, kTask.target, kTask.task_name);
}

// A successful record written by `source`.
Record record_of(const std::string& source, int64_t config) {
  Record r = make_record("dense:K=16,M=16,N=16", config, {1e-3});
  r.source = source;
  return r;
}

TEST_P(StoreConformance, AppendedRecordsReadBackExactly) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  std::vector<Record> batch = {make_record("dense:K=64,M=64,N=64", 3, {0.0045656413, 0.0045}),
                               make_record("dense:K=64,M=64,N=64", 4, {}, 4),
                               make_record("dense:K=8,M=8,N=8", 5, {1e-7})};
  batch[0].error_msg = "quotes \" and unicode \xc3\xa9";
  ASSERT_TRUE(store->append(batch).ok());
  auto rows = store->records();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);
  for (size_t i = 0; i < rows->size(); ++i) {
    Record expected = batch[i];
    EXPECT_GT((*rows)[i].id, i == 0 ? 0 : (*rows)[i - 1].id);
    expected.id = (*rows)[i].id;
    EXPECT_EQ((*rows)[i], expected) << "record " << i;
  }
  EXPECT_DOUBLE_EQ((*rows)[0].mean_cost(), (0.0045656413 + 0.0045) / 2);
  EXPECT_TRUE(std::isinf((*rows)[1].mean_cost()));
  EXPECT_TRUE(store->append({}).ok());  // empty batch: no-op
  EXPECT_EQ(*store->count(), 3);
}

TEST_P(StoreConformance, FiltersCountAndLimit) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  std::vector<Record> batch;
  for (int i = 0; i < 10; ++i) {
    batch.push_back(make_record(i % 2 ? "dense:K=1,M=1,N=1" : "dense:K=2,M=2,N=2", i,
                                i % 3 == 0 ? std::vector<double>{} : std::vector<double>{0.1 * i},
                                i % 3 == 0 ? 2 : 0, i < 5 ? "llvm -mcpu=a" : "llvm -mcpu=b"));
  }
  ASSERT_TRUE(store->append(batch).ok());
  RecordFilter f;
  f.workload = "dense:K=1,M=1,N=1";
  EXPECT_EQ(*store->count(f), 5);
  f.only_ok = true;
  EXPECT_EQ(*store->count(f), 3);  // i = 1, 5, 7 (3 and 9 failed)
  f.target = "llvm -mcpu=b";
  EXPECT_EQ(*store->count(f), 2);
  RecordFilter limited;
  limited.limit = 4;
  auto first4 = store->records(limited);
  ASSERT_EQ(first4->size(), 4u);
  EXPECT_EQ(first4->back().config_index, 3);
  limited.after_id = first4->back().id;
  auto next4 = store->records(limited);
  ASSERT_EQ(next4->size(), 4u);
  EXPECT_EQ(next4->front().config_index, 4);
  EXPECT_EQ(*store->count(limited), 6);  // count ignores the limit
  RecordFilter none;
  none.task_name = "no_such_task";
  EXPECT_TRUE(store->records(none)->empty());
}

TEST_P(StoreConformance, BestPrefersSmallestMeanAndEarliestOnTies) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  const std::string w = "dense:K=64,M=64,N=64";
  EXPECT_FALSE(store->best("llvm -mcpu=znver5", "dense_pack.x86", w)->has_value());
  ASSERT_TRUE(store
                  ->append({make_record(w, 1, {}, 7),       // failure: never best
                            make_record(w, 2, {3.0, 1.0}),  // mean 2
                            make_record(w, 3, {2.0})})      // mean 2, later: loses tie
                  .ok());
  auto best = store->best("llvm -mcpu=znver5", "dense_pack.x86", w);
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->config_index, 2);
  ASSERT_TRUE(store->append({make_record(w, 4, {1.5})}).ok());  // strictly smaller: wins
  EXPECT_EQ((*store->best("llvm -mcpu=znver5", "dense_pack.x86", w))->config_index, 4);
  EXPECT_FALSE(store->best("llvm -mcpu=other", "dense_pack.x86", w)->has_value());
  EXPECT_FALSE(store->best("llvm -mcpu=znver5", "dense_nopack.x86", w)->has_value());
}

TEST_P(StoreConformance, BestPerWorkloadGivesOneWinnerPerTaskOrderedById) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store
                  ->append({make_record("dense:K=1,M=1,N=1", 0, {5.0}),
                            make_record("dense:K=2,M=2,N=2", 1, {1.0}),
                            make_record("dense:K=1,M=1,N=1", 2, {4.0}),
                            make_record("dense:K=1,M=1,N=1", 3, {4.0}),
                            make_record("dense:K=3,M=3,N=3", 4, {}, 1),  // only failures
                            make_record("dense:K=1,M=1,N=1", 5, {0.5}, 0, "llvm -mcpu=b"),
                            make_record("dense:K=1,M=1,N=1", 6, {0.5}, 0, "llvm -mcpu=znver5",
                                        "dense_nopack.x86")})
                  .ok());
  auto all = store->best_per_workload();
  ASSERT_TRUE(all.ok()) << all.status().message();
  std::vector<int64_t> indices;
  for (const Record& r : *all) indices.push_back(r.config_index);
  EXPECT_EQ(indices, (std::vector<int64_t>{1, 2, 5, 6}));
  auto only_b = store->best_per_workload(std::string("llvm -mcpu=b"));
  ASSERT_EQ(only_b->size(), 1u);
  EXPECT_EQ(only_b->front().config_index, 5);
}

// A record measured on an emulator (is_emulated) is kept and read back, but it is never the best
// and is not comparable: its costs are not the device's speed.
TEST_P(StoreConformance, EmulatedRecordsAreKeptButNeverBestOrComparable) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  const std::string w = "dense:K=8,M=8,N=8";
  Record emulated = make_record(w, 1, {1e-9});
  emulated.measure_options = emulated_measure_options(R"({"number":1,"repeat":1})");
  ASSERT_TRUE(is_emulated(emulated));
  EXPECT_EQ(emulated.measure_options, R"({"emulated":true,"number":1,"repeat":1})");
  ASSERT_TRUE(store->append({emulated, make_record(w, 2, {1e-3})}).ok());
  auto best = store->best("llvm -mcpu=znver5", "dense_pack.x86", w);
  ASSERT_TRUE(best.ok() && best->has_value()) << best.status().message();
  EXPECT_EQ((*best)->config_index, 2);
  auto per_workload = store->best_per_workload();
  ASSERT_TRUE(per_workload.ok() && per_workload->size() == 1u);
  EXPECT_EQ(per_workload->front().config_index, 2);
  RecordFilter f;
  f.versions = Versions::kComparable;
  EXPECT_EQ(*store->count(f), 1);
  f.versions = Versions::kOutdated;
  auto outdated = store->records(f);
  ASSERT_TRUE(outdated.ok() && outdated->size() == 1u);
  EXPECT_TRUE(is_emulated(outdated->front()));
  EXPECT_FALSE(is_comparable(outdated->front()));
}

TEST_P(StoreConformance, MeasuredIndicesIncludeFailures) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  const std::string w = "dense:K=64,M=64,N=64";
  ASSERT_TRUE(store
                  ->append({make_record(w, 7, {1.0}), make_record(w, 9, {}, 6),
                            make_record(w, 7, {1.1}), make_record("dense:K=1,M=1,N=1", 8, {1.0})})
                  .ok());
  auto got = store->measured_indices("llvm -mcpu=znver5", "dense_pack.x86", w);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, (std::set<int64_t>{7, 9}));
}

TEST_P(StoreConformance, InvalidRecordRejectsTheWholeBatch) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  std::vector<Record> batch = {make_record("dense:K=1,M=1,N=1", 0, {1.0}),
                               make_record("dense:K=1,M=1,N=1", 1, {})};  // success, no costs
  Status s = store->append(batch);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("batch item 1"), std::string::npos) << s.message();
  batch[1] = make_record("dense:K=1,M=1,N=1", 1, {1.0}, 9);
  EXPECT_FALSE(store->append(batch).ok());
  batch[1] = make_record("dense:K=1,M=1,N=1", 1, {std::nan("")});
  EXPECT_FALSE(store->append(batch).ok());
  batch[1] = make_record("dense:K=1,M=1,N=1", 1, {1.0});
  batch[1].entities = "not a list";
  EXPECT_FALSE(store->append(batch).ok());
  EXPECT_EQ(*store->count(), 0);
}

TEST_P(StoreConformance, MessagesWithArbitraryBytesAreStoredAsValidUtf8) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  Record r = make_record("dense:K=1,M=1,N=1", 0, {}, 2);
  r.error_msg = "ld: \xff\xfe bad \xc3\xa9";
  ASSERT_TRUE(store->append({r}).ok());
  EXPECT_EQ(store->records()->front().error_msg, "ld: \xef\xbf\xbd\xef\xbf\xbd bad \xc3\xa9");
  Record bad_target = make_record("dense:K=1,M=1,N=1", 0, {1.0});
  bad_target.target = "llvm \xff";
  EXPECT_FALSE(store->append({bad_target}).ok());
}

TEST_P(StoreConformance, LeaseOfAnotherOwnerBlocksUntilItExpires) {
  auto store = open_or_die(location_);
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

TEST_P(StoreConformance, LeaseClaimSeesRecordsAppendedSinceAndAppendReleasesOnlyTheOwners) {
  auto store = open_or_die(location_);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->claim(kTask, {1, 2}, 0, "a", 0, 100).ok());
  ASSERT_TRUE(store->claim(kTask, {3}, 0, "b", 0, 100).ok());
  // "a" records 1 and 2 (releasing them); "b"'s lease on 3 survives a record of 3 by "a".
  ASSERT_TRUE(store->append({lease_record(1), lease_record(2), lease_record(3)}, "a").ok());
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

  auto read_only = open_store(location_, /*read_only=*/true);
  ASSERT_TRUE(read_only.ok());
  EXPECT_FALSE((*read_only)->claim(kTask, {7}, 0, "c", 0, 1).ok());
}

TEST_P(StoreConformance, RunTimesOfOneRunAndTaskSumInOneRow) {
  auto store = open_store(location_);
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE((*store)->add_run_times(make_run_times("run-a", "dense:K=8,M=8,N=8", 1)).ok());
  RunTimes later = make_run_times("run-a", "dense:K=8,M=8,N=8", 2);
  later.started = 1700000099;  // ignored: the row keeps its first start
  ASSERT_TRUE((*store)->add_run_times(later).ok());
  ASSERT_TRUE((*store)->add_run_times(make_run_times("run-a", "dense:K=16,M=8,N=8", 1)).ok());
  RunTimes other = make_run_times("run-b", "dense:K=8,M=8,N=8", 1);
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

TEST_P(StoreConformance, RunTimesCooldownStaysUnknownUntilARunnerKnowsIt) {
  auto store = open_store(location_);
  ASSERT_TRUE(store.ok());
  RunTimes farm = make_run_times("farm-run", "dense:K=8,M=8,N=8", 1);
  farm.cooldown_s.reset();
  ASSERT_TRUE((*store)->add_run_times(farm).ok());
  ASSERT_TRUE((*store)->add_run_times(farm).ok());
  auto rows = (*store)->run_times();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_FALSE(rows->front().cooldown_s.has_value());
  EXPECT_DOUBLE_EQ(rows->front().run_s, 4);
}

TEST_P(StoreConformance, RunTimesRefuseBadNumbersAnonymousRunsAndReadOnlyStores) {
  auto store = open_store(location_);
  ASSERT_TRUE(store.ok());
  RunTimes bad = make_run_times("run", "dense:K=8,M=8,N=8", 1);
  bad.run_s = std::numeric_limits<double>::quiet_NaN();
  Status s = (*store)->add_run_times(bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("run_s"), std::string::npos) << s.message();
  bad = make_run_times("run", "dense:K=8,M=8,N=8", 1);
  bad.trials = -1;
  EXPECT_NE((*store)->add_run_times(bad).message().find("trials"), std::string::npos);
  EXPECT_FALSE((*store)->add_run_times(make_run_times("", "dense:K=8,M=8,N=8", 1)).ok());
  EXPECT_TRUE((*store)->run_times()->empty());

  auto reader = open_store(location_, /*read_only=*/true);
  ASSERT_TRUE(reader.ok());
  s = (*reader)->add_run_times(make_run_times("run", "dense:K=8,M=8,N=8", 1));
  EXPECT_NE(s.message().find("read-only"), std::string::npos) << s.message();
}

TEST_P(StoreConformance, AppendAddsRunTimesInTheBatchsTransaction) {
  auto store = open_store(location_);
  ASSERT_TRUE(store.ok());
  Record r;
  r.target = "llvm";
  r.task_name = "dense_pack.x86";
  r.workload = "dense:K=8,M=8,N=8";
  r.entities = nlohmann::json::array();
  r.costs = {1e-3};
  r.flop = 1e6;
  r.source = "kiln tune";
  RunTimes t = make_run_times("run", r.workload, 1);
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

TEST_P(StoreConformance, JobsAddGetListAndStates) {
  auto jobs = open_job_store(location_);
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

TEST_P(StoreConformance, JobsCountTheirRecordsExactly) {
  auto jobs = open_job_store(location_);
  auto records = open_store(location_);
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

// Several daemons on one store: a job has one owner at a time, through a lease that only expiry
// (the owner died) hands to another; requests reach the owner; ends are the owner's alone.
TEST_P(StoreConformance, JobsAreOwnedThroughLeases) {
  auto opened = open_job_store(location_);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  JobStore& jobs = **opened;
  const int64_t a = *jobs.add("a", "s", "", 0, 100);
  const int64_t b = *jobs.add("b", "s", "", 0, 100);

  EXPECT_TRUE(*jobs.claim_job(a, "A", 10, 100));
  EXPECT_FALSE(*jobs.claim_job(a, "B", 10, 105));  // A's lease holds until 110
  Result<JobRow> row = jobs.get(a);
  EXPECT_EQ(row->state, JobState::kRunning);
  EXPECT_EQ(row->owner, "A");
  EXPECT_EQ(row->lease_expires, 110);
  EXPECT_TRUE(*jobs.claim_job(a, "A", 10, 106));  // its own: a retried claim
  EXPECT_EQ(jobs.get(a)->lease_expires, 116);

  // Renewal keeps what A owns; b is not running.
  Result<std::vector<OwnedJob>> owned = jobs.renew_jobs("A", {a, b}, 10, 108);
  ASSERT_TRUE(owned.ok()) << owned.status().message();
  ASSERT_EQ(owned->size(), 1u);
  EXPECT_EQ((*owned)[0].id, a);
  EXPECT_EQ((*owned)[0].request, JobRequest::kNone);
  EXPECT_EQ(jobs.get(a)->lease_expires, 118);

  // A stops renewing; after expiry B takes the job over, and A can neither renew nor end it.
  EXPECT_FALSE(*jobs.claim_job(a, "B", 10, 117));
  EXPECT_TRUE(*jobs.claim_job(a, "B", 10, 119));
  EXPECT_TRUE(jobs.renew_jobs("A", {a}, 10, 120)->empty());
  EXPECT_FALSE(*jobs.release_job(a, "A", JobState::kDone, "x", 120));
  row = jobs.get(a);
  EXPECT_EQ(row->state, JobState::kRunning);
  EXPECT_EQ(row->owner, "B");

  // A request reaches the owner, and survives a takeover.
  EXPECT_TRUE(*jobs.request_job(a, JobRequest::kCancel, 121));
  owned = jobs.renew_jobs("B", {a}, 10, 122);
  ASSERT_EQ(owned->size(), 1u);
  EXPECT_EQ((*owned)[0].request, JobRequest::kCancel);
  EXPECT_TRUE(*jobs.claim_job(a, "C", 10, 200));
  EXPECT_EQ(jobs.get(a)->request, JobRequest::kCancel);
  EXPECT_TRUE(*jobs.release_job(a, "C", JobState::kCancelled, "cancelled on request", 201));
  row = jobs.get(a);
  EXPECT_EQ(row->state, JobState::kCancelled);
  EXPECT_EQ(row->owner, "");
  EXPECT_EQ(row->request, JobRequest::kNone);
  EXPECT_EQ(row->reason, "cancelled on request");
  EXPECT_FALSE(*jobs.claim_job(a, "A", 10, 300));  // final

  // A job nobody runs changes state only from the state it was read in.
  EXPECT_FALSE(*jobs.request_job(b, JobRequest::kPause, 202));  // queued, not running
  EXPECT_FALSE(*jobs.change_state(b, JobState::kRunning, JobState::kPaused, "p", 203));
  EXPECT_TRUE(*jobs.change_state(b, JobState::kQueued, JobState::kPaused, "p", 204));
  EXPECT_FALSE(*jobs.claim_job(b, "A", 10, 205));  // paused
  EXPECT_TRUE(*jobs.change_state(b, JobState::kPaused, JobState::kQueued, "", 206));
  EXPECT_TRUE(*jobs.claim_job(b, "A", 10, 207));
  EXPECT_FALSE(*jobs.change_state(b, JobState::kRunning, JobState::kQueued, "", 208));  // owned

  // A daemon alone on its store requeues what was running, owners gone.
  EXPECT_EQ(*jobs.requeue_running(209), 1);
  row = jobs.get(b);
  EXPECT_EQ(row->state, JobState::kQueued);
  EXPECT_EQ(row->owner, "");

  EXPECT_FALSE(jobs.claim_job(99, "A", 10, 1).ok());
  EXPECT_FALSE(jobs.request_job(99, JobRequest::kCancel, 1).ok());
  EXPECT_FALSE(jobs.change_state(99, JobState::kQueued, JobState::kPaused, "", 1).ok());
  EXPECT_FALSE(*jobs.release_job(99, "A", JobState::kDone, "", 1));
  EXPECT_TRUE(jobs.renew_jobs("A", {}, 10, 1)->empty());
}

// kiln report reads jobs beside a running daemon: a read-only open reads, never writes, and
// never creates a store.
TEST_P(StoreConformance, JobsReadOnlyOpenReadsAndRefusesToWrite) {
  EXPECT_FALSE(open_job_store(location_, /*read_only=*/true).ok());
  {
    auto jobs = open_job_store(location_);
    ASSERT_TRUE(jobs.ok());
    ASSERT_TRUE((*jobs)->add("j", "spec", "/d", 3, 1).ok());
  }
  auto reader = open_job_store(location_, /*read_only=*/true);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto row = (*reader)->get(1);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->name, "j");
  EXPECT_EQ(row->priority, 3);
  EXPECT_FALSE((*reader)->add("k", "spec", "/d", 0, 2).ok());
  EXPECT_EQ((*reader)->list()->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, StoreConformance,
    ::testing::Values(StoreBackend{"sqlite", [](const TempDir& dir) { return dir.file("s.db"); }},
                      StoreBackend{
                          "sqlite_url",
                          [](const TempDir& dir) { return "sqlite://" + dir.file("s.db"); }},
                      // A new database of the binary's one PostgreSQL server (tests/postgres).
                      StoreBackend{"postgresql",
                                   [](const TempDir&) {
                                     auto* server = kiln::testing::PgServer::shared();
                                     return server ? server->new_database() : std::string();
                                   },
                                   [] { return kiln::testing::PgServer::skip_reason(); }}),
    [](const ::testing::TestParamInfo<StoreBackend>& info) { return info.param.name; });

}  // namespace
}  // namespace kiln::store
