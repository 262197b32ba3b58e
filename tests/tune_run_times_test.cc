// The tuning loop records where each run's time went (store/run_times.h): one row per (run, task)
// written after every committed batch, one run identity for all the tasks of a TuneJob, and the
// local runner's cooldowns split out of the run time.
#include <gtest/gtest.h>

#include "builder/build_pool.h"
#include "builder/target.h"
#include "ops/registry.h"
#include "runner/local_runner.h"
#include "store/open_store.h"
#include "tests/temp_dir.h"
#include "tuner/tune_job.h"

namespace kiln {
namespace {

TEST(TuneRunTimes, OneRowPerTaskOfTheRunWithCooldownSplitOut) {
  testing::TempDir dir;
  auto db = store::open_store(dir.file("r.db"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  builder::LocalBuildPool builder({2, /*timeout_s=*/10});
  runner::RunnerOptions ro;
  ro.measure.time = {.number = 1, .repeat = 1};
  ro.timeout_s = 10;
  ro.cooldown_interval_s = 0.02;
  runner::LocalRunner runner(ro);
  std::vector<tuner::TuneJobTask> tasks;
  for (const char* name : {"dense_pack.x86", "dense_nopack.x86"}) {
    const ops::Template* tmpl = ops::find_template(name);
    ASSERT_NE(tmpl, nullptr);
    tasks.push_back({tmpl, *tmpl->normalize(*ops::Workload::parse("dense:M=16,N=32,K=16"))});
  }
  tuner::TuneJobOptions options;
  options.tuner = "random";
  options.transfer = false;
  options.loop.n_trial = 6;
  options.loop.batch_size = 3;
  tuner::TuneJob job(tasks, builder::host_target(), options);
  auto result = job.run(builder, runner, **db);
  ASSERT_TRUE(result.ok()) << result.status().message();

  auto rows = (*db)->run_times();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].run, (*rows)[1].run);  // one run for the job's tasks
  EXPECT_FALSE((*rows)[0].run.empty());
  for (size_t i = 0; i < rows->size(); ++i) {
    const store::RunTimes& t = (*rows)[i];
    EXPECT_EQ(t.task_name, std::string(tasks[i].tmpl->name()));
    EXPECT_EQ(t.workload, tasks[i].workload.to_string());
    EXPECT_EQ(t.source, "kiln tune");
    EXPECT_EQ(t.trials, 6);
    EXPECT_EQ(t.errors, 0);
    EXPECT_GT(t.build_s, 0);
    EXPECT_GT(t.run_s, 0);
    ASSERT_TRUE(t.cooldown_s.has_value());
    EXPECT_NEAR(*t.cooldown_s, 6 * 0.02, 1e-9);  // one cooldown per measured config
    EXPECT_LE(*t.cooldown_s, t.run_s);
    EXPECT_GE(t.tuner_s(), -1e-6);  // the parts never exceed the whole
    EXPECT_GE(t.updated, t.started);
  }

  // A second run of the same job is another run: its own rows.
  options.loop.n_trial = 9;
  tuner::TuneJob again(tasks, builder::host_target(), options);
  ASSERT_TRUE(again.run(builder, runner, **db).ok());
  rows = (*db)->run_times();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_NE((*rows)[2].run, (*rows)[0].run);
  EXPECT_EQ((*rows)[2].trials, 3);
}

}  // namespace
}  // namespace kiln
