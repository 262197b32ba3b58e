// The tuning loop's resume rule and leases (tuner/tune_loop.h, tuner/resume_rule.h) with the real
// builder and runner processes: environmental failures are measured again under new measure
// options (never deleting the old records), --retry-errors measures every failure again, and a
// config claimed by a dead tuner is skipped until its lease expires (injected clock).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "builder/build_pool.h"
#include "builder/target.h"
#include "ops/registry.h"
#include "runner/local_runner.h"
#include "store/open_store.h"
#include "tuner/resume_rule.h"
#include "tuner/tune_loop.h"

namespace kiln {
namespace {

constexpr const char* kOptions = R"({"number":1,"repeat":1})";

// A dense task small enough to measure in milliseconds, with a store of its own.
class TuneResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmpl_ = ops::find_template("dense_pack.x86");
    workload_ = *tmpl_->normalize(*ops::Workload::parse("dense:M=16,N=32,K=16"));
    space_ = std::make_unique<ConfigSpace>(tmpl_->space(workload_));
    path_ = (std::filesystem::temp_directory_path() /
             ("kiln-tune-resume-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                .string();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
    auto db = store::open_store(path_);
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = std::move(db).value();
  }
  void TearDown() override {
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }

  store::TaskKey task() const {
    return {target_.to_string(), std::string(tmpl_->name()), workload_.to_string()};
  }

  // A failed record of config `index`, as an earlier run would have left it.
  store::Record failure(int64_t index, MeasureError error, const std::string& options,
                        bool runner_lost = false) const {
    store::Record r;
    r.target = target_.to_string();
    r.task_name = std::string(tmpl_->name());
    r.workload = workload_.to_string();
    r.config_index = index;
    r.entities = space_->get(index).to_json()["entity"];
    r.error_no = static_cast<int>(error);
    r.timestamp = 1700000000;
    r.error_msg = "earlier run";
    r.source = "earlier run";
    r.measure_options = options;
    r.runner_lost = runner_lost;
    return r;
  }

  // Grid-tunes the task for `n_trial` trials under kOptions; the records per config after it.
  Result<tuner::TuneProgress> tune(tuner::TuneOptions options) {
    builder::LocalBuildPool builder({2, 10});
    runner::RunnerOptions ro;
    ro.measure.time = {.number = 1, .repeat = 1};
    ro.cooldown_interval_s = 0;
    runner::LocalRunner runner(ro);
    tuner::GridTuner grid(*space_);
    options.measure_options = kOptions;
    return tuner::tune_task(*tmpl_, workload_, target_, *space_, grid, builder, runner, *db_,
                            options);
  }

  // config index -> its records' error codes, in id order.
  std::map<int64_t, std::vector<int>> errors_by_config() {
    std::map<int64_t, std::vector<int>> out;
    std::vector<store::Record> records = *db_->records();
    for (const store::Record& r : records) out[r.config_index].push_back(r.error_no);
    return out;
  }

  const ops::Template* tmpl_ = nullptr;
  ops::Workload workload_;
  std::unique_ptr<ConfigSpace> space_;
  Target target_ = builder::host_target();
  std::string path_;
  std::unique_ptr<store::Store> db_;
};

TEST(ResumeRuleTest, WhichRecordsSettleTheirConfig) {
  tuner::ResumeRule rule{kOptions, false};
  store::Record r;
  r.error_no = static_cast<int>(MeasureError::kRunTimeout);
  r.measure_options = kOptions;
  EXPECT_TRUE(rule.settles(r, true));  // same options: the timeout stands
  r.measure_options = R"({"number":2,"repeat":1})";
  EXPECT_FALSE(rule.settles(r, true));
  r.measure_options = "";
  EXPECT_FALSE(rule.settles(r, true));  // unknown options
  EXPECT_TRUE(rule.settles(r, false));  // recorded during the run: final for the run
  r.error_no = static_cast<int>(MeasureError::kWrongAnswer);
  EXPECT_TRUE(rule.settles(r, true));
  tuner::ResumeRule retry{kOptions, true};
  EXPECT_FALSE(retry.settles(r, true));
  r.error_no = 0;
  EXPECT_TRUE(retry.settles(r, true));
  tuner::ResumeRule unknown{"", false};  // a run that does not know its options
  r.error_no = static_cast<int>(MeasureError::kBuildTimeout);
  EXPECT_FALSE(unknown.settles(r, true));
}

// A record of a lost runner (or tracker) is measured again by the next run, even under the same
// options: kiln tune with its tracker killed recorded most of a batch so.
TEST(ResumeRuleTest, LostRunnersNeverSettleARecordFoundAtTheStart) {
  tuner::ResumeRule rule{kOptions, false};
  store::Record r;
  r.error_no = static_cast<int>(MeasureError::kRuntimeDevice);
  r.runner_lost = true;
  r.measure_options = kOptions;
  EXPECT_FALSE(rule.settles(r, true));
  EXPECT_TRUE(rule.settles(r, false));  // recorded during the run: final for the run
  r.runner_lost = false;                // a kernel that crashed its device: the config's fault
  EXPECT_TRUE(rule.settles(r, true));
}

TEST_F(TuneResumeTest, EnvironmentalFailuresUnderOtherOptionsAreMeasuredAgain) {
  ASSERT_TRUE(db_->append({
                              failure(0, MeasureError::kRunTimeout, R"({"number":1,"repeat":9})"),
                              failure(1, MeasureError::kBuildTimeout, kOptions),
                              failure(2, MeasureError::kRuntimeDevice, "", /*runner_lost=*/true),
                              failure(3, MeasureError::kRuntimeDevice, ""),  // kernel crash
                              failure(4, MeasureError::kWrongAnswer, kOptions),
                          })
                  .ok());
  tuner::TuneOptions options;
  options.n_trial = 6;
  auto p = tune(options);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->resumed, 3);  // 1 (same options), 3 and 4 (the config's fault)
  EXPECT_EQ(p->retried, 2);  // 0 and 2
  EXPECT_EQ(p->done, 6);
  using E = std::vector<int>;
  const int timeout = static_cast<int>(MeasureError::kRunTimeout);
  const int build_timeout = static_cast<int>(MeasureError::kBuildTimeout);
  const int device = static_cast<int>(MeasureError::kRuntimeDevice);
  const int wrong = static_cast<int>(MeasureError::kWrongAnswer);
  std::map<int64_t, E> expected = {{0, E{timeout, 0}}, {1, E{build_timeout}}, {2, E{device, 0}},
                                   {3, E{device}},     {4, E{wrong}},         {5, E{0}}};
  EXPECT_EQ(errors_by_config(), expected);  // old records kept, each config measured once more
  std::vector<store::Record> records = *db_->records();
  for (const store::Record& r : records) {
    if (r.source != "earlier run") {
      EXPECT_EQ(r.measure_options, kOptions);
    }
  }
  EXPECT_TRUE(db_->leases(task())->empty());  // every claim released by its record

  // Under the same options nothing is measured again.
  p = tune(options);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->resumed, 6);
  EXPECT_EQ(p->done, 6);
  EXPECT_EQ(errors_by_config(), expected);

  // --retry-errors: every config whose records are all failures, once.
  options.retry_errors = true;
  p = tune(options);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->resumed, 3);  // 0, 2 and 5 succeeded
  EXPECT_EQ(p->retried, 3);
  EXPECT_EQ(p->done, 6);
  expected[1].push_back(0);
  expected[3].push_back(0);
  expected[4].push_back(0);
  EXPECT_EQ(errors_by_config(), expected);
}

TEST_F(TuneResumeTest, ConfigsADeadTunerClaimedAreSkippedUntilItsLeaseExpires) {
  // A tuner claimed 0, 1 and 2 at t=1000 for 60 s, then died.
  auto dead = db_->claim(task(), {0, 1, 2}, 0, "dead", 1000, 1060);
  ASSERT_TRUE(dead.ok());
  ASSERT_EQ(dead->claimed.size(), 3u);

  double now = 1030;
  tuner::TuneOptions options;
  options.n_trial = 3;
  options.lease_owner = "alive";
  options.lease_s = 60;
  options.clock = [&] { return now; };
  auto p = tune(options);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->done, 3);
  std::map<int64_t, std::vector<int>> expected = {{3, {0}}, {4, {0}}, {5, {0}}};
  EXPECT_EQ(errors_by_config(), expected);  // the claimed ones were left alone

  now = 1060;  // the dead tuner's leases have expired
  options.n_trial = 6;
  p = tune(options);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->resumed, 3);
  EXPECT_EQ(p->done, 6);
  expected.insert({{0, {0}}, {1, {0}}, {2, {0}}});
  EXPECT_EQ(errors_by_config(), expected);
  EXPECT_TRUE(db_->leases(task())->empty());
}

}  // namespace
}  // namespace kiln
