// A whole model under a short budget (tuner/model_tune.h): every task's first round is small
// (its fallback config, then a few trials), so that every task is measured, and the estimate
// covers the whole model, before any task gets a second round; the status counts the measured
// workloads and gives an ETA.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stop_token>

#include "builder/build_pool.h"
#include "builder/target.h"
#include "ops/registry.h"
#include "runner/local_runner.h"
#include "store/open_store.h"
#include "tests/temp_dir.h"
#include "tuner/model_tune.h"

namespace kiln {
namespace {

TEST(ModelTuneFirstRound, EveryTaskIsMeasuredBeforeAnyGetsASecondRound) {
  EXPECT_LE(tuner::ModelTuneOptions{}.first_round_trials, 8);  // "a few", not a full round
  testing::TempDir dir("kiln-first-round");
  auto db = store::open_store(dir.file("first.db"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  builder::LocalBuildPool builder({2, /*timeout_s=*/10});
  runner::RunnerOptions ro;
  ro.measure.time = {.number = 1, .repeat = 1};
  ro.timeout_s = 10;
  ro.cooldown_interval_s = 0;
  runner::LocalRunner runner(ro);
  const ops::Template* tmpl = ops::find_template("dense_nopack.x86");
  ASSERT_NE(tmpl, nullptr);
  // Many small tasks; each space holds far more than a first round.
  std::vector<tuner::ModelTask> tasks;
  constexpr int kTasks = 10;
  for (int k = 0; k < kTasks; ++k) {
    std::string text = "dense:M=4,N=" + std::to_string(16 * (k + 1)) + ",K=32";
    tasks.push_back({{tmpl, *tmpl->normalize(*ops::Workload::parse(text))}, 1.0 + k});
  }
  tuner::ModelTuneOptions options;
  options.job.tuner = "random";
  options.job.transfer = false;
  options.job.loop.batch_size = 2;
  options.budget.seconds = 600;  // a time budget: rounds are not shrunk to fit a trial budget
  options.round_trials = 64;
  options.first_round_trials = 2;
  tuner::ModelTuneJob job(tasks, builder::host_target(), options);

  std::stop_source stop;
  std::vector<std::pair<std::string, int64_t>> rounds;  // workload, trials after the round
  tuner::ModelTuneEvents events;
  tuner::ModelTuneStatus after_first_rounds;
  events.progress = [&](const tuner::ModelTuneStatus& st) {
    if (static_cast<int>(rounds.size()) == kTasks - 1 && st.measured_workloads == kTasks) {
      after_first_rounds = st;
    }
  };
  events.round_finished = [&](const tuner::TuneTaskOutcome& outcome) {
    rounds.emplace_back(outcome.task.workload.to_string(), outcome.progress.done);
    if (static_cast<int>(rounds.size()) == kTasks) stop.request_stop();
  };
  auto result = job.run(builder, runner, **db, events, stop.get_token());
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(rounds.size(), static_cast<size_t>(kTasks));
  std::set<std::string> seen;
  for (const auto& [workload, trials] : rounds) {
    EXPECT_TRUE(seen.insert(workload).second) << workload << " had a second round first";
    EXPECT_LE(trials, 2) << workload;
  }
  for (const tuner::ModelTaskState& s : result->tasks) {
    EXPECT_TRUE(std::isfinite(s.best_seconds));
    EXPECT_EQ(s.rounds, 1);
  }
  EXPECT_EQ(result->status.measured_workloads, kTasks);
  EXPECT_EQ(result->status.workloads, kTasks);
  EXPECT_TRUE(result->status.latency_complete);
  // The estimate is complete as soon as the last first round commits.
  EXPECT_EQ(after_first_rounds.workloads, kTasks);
  EXPECT_TRUE(after_first_rounds.latency_complete);
  // A time budget's ETA: what is left of it.
  EXPECT_GT(result->status.eta_s, 0);
  EXPECT_LE(result->status.eta_s, 600);
}

TEST(ModelTuneFirstRound, TrialBudgetEtaFollowsTheRate) {
  testing::TempDir dir("kiln-first-round-eta");
  auto db = store::open_store(dir.file("eta.db"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  builder::LocalBuildPool builder({2, /*timeout_s=*/10});
  runner::RunnerOptions ro;
  ro.measure.time = {.number = 1, .repeat = 1};
  ro.timeout_s = 10;
  ro.cooldown_interval_s = 0;
  runner::LocalRunner runner(ro);
  const ops::Template* tmpl = ops::find_template("dense_nopack.x86");
  ASSERT_NE(tmpl, nullptr);
  std::vector<tuner::ModelTask> tasks = {
      {{tmpl, *tmpl->normalize(*ops::Workload::parse("dense:M=4,N=16,K=32"))}, 1},
      {{tmpl, *tmpl->normalize(*ops::Workload::parse("dense:M=4,N=32,K=32"))}, 1}};
  tuner::ModelTuneOptions options;
  options.job.tuner = "random";
  options.job.transfer = false;
  options.job.loop.batch_size = 2;
  options.budget.total_trials = 8;
  options.round_trials = 4;
  tuner::ModelTuneJob job(tasks, builder::host_target(), options);
  std::vector<double> etas;
  tuner::ModelTuneEvents events;
  events.progress = [&](const tuner::ModelTuneStatus& st) {
    if (st.fresh > 0 || st.trials > 0) etas.push_back(st.eta_s);
  };
  auto result = job.run(builder, runner, **db, events);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->status.trials, 8);
  ASSERT_FALSE(etas.empty());
  for (double e : etas) EXPECT_GE(e, 0);  // known once a trial of this run is measured
  EXPECT_EQ(result->status.eta_s, 0);     // nothing left of the budget
}

}  // namespace
}  // namespace kiln
