// From a job spec to the tasks and options of its ModelTuneJob (jobs/job_plan.h).
#include "jobs/job_plan.h"

#include <gtest/gtest.h>

#include "store/job_store.h"

namespace kiln::daemon {
namespace {

JobSpec parsed(const std::string& yaml) {
  Result<JobSpec> s = parse_job_spec(yaml, "job.yaml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : JobSpec{};
}

TEST(JobPlanTest, AWorkloadJobHasATaskPerTemplateAndKilnTunesDefaults) {
  JobSpec spec = parsed(
      "workloads: [\"dense:M=16,N=16,K=16\", \"dense:M=16,N=32,K=16\"]\n"
      "tuner: random\nseed: 9\nearly_stopping: 7\nmeasure: {number: 2}\n");
  Result<JobPlan> plan = plan_job(spec, store::job_source(4));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->tasks.size(), 4u);  // dense_nopack.x86 and dense_pack.x86 for each
  for (const tuner::ModelTask& t : plan->tasks) EXPECT_EQ(t.weight, 1);
  const tuner::ModelTuneOptions& o = plan->options;
  EXPECT_EQ(o.job.tuner, "random");
  EXPECT_EQ(o.job.seed, 9u);
  EXPECT_EQ(o.job.loop.early_stopping, 7);
  EXPECT_EQ(o.job.loop.source, "kiln serve job 4");
  EXPECT_EQ(o.job.loop.lease_owner, "kiln serve job 4");  // the same claims after a restart
  EXPECT_NE(o.job.loop.measure_options.find("\"number\":2"), std::string::npos)
      << o.job.loop.measure_options;
  // No budget: kiln tune's 1000 trials per task.
  EXPECT_FALSE(o.budget.total_trials);
  EXPECT_EQ(o.budget.trials_per_task, 1000);
  EXPECT_EQ(o.round_trials, 64);
}

TEST(JobPlanTest, AModelJobHasTheModelsTasksWeighted) {
  JobSpec spec = parsed("model: " + std::string(KILN_SHARED_DIR) +
                        "/models/resnet18/resnet18.onnx\nops: [dense]\nbudget: {trials: 10}\n");
  Result<JobPlan> plan = plan_job(spec, "s");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->tasks.size(), 2u);  // the classifier: dense_nopack and dense_pack
  EXPECT_EQ(plan->options.budget.total_trials, 10);
  EXPECT_EQ(plan->options.round_trials, 5);
}

TEST(JobPlanTest, AModelThatIsGoneFailsThePlanNamingIt) {
  JobSpec spec = parsed("workloads: [\"dense:M=16,N=16,K=16\"]\n");
  spec.workloads.clear();
  spec.model = "/nonexistent/m.onnx";
  Result<JobPlan> plan = plan_job(spec, "s");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("model: "), std::string::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find("/nonexistent/m.onnx"), std::string::npos);
}

TEST(JobPlanTest, RoundsSpreadSmallBudgetsOverTheTasks) {
  tuner::ModelBudget b;
  EXPECT_EQ(round_trials(b, 3), 64);
  b.total_trials = 10;
  EXPECT_EQ(round_trials(b, 4), 2);
  EXPECT_EQ(round_trials(b, 20), 1);
  b.trials_per_task = 1;
  EXPECT_EQ(round_trials(b, 2), 1);
  tuner::ModelBudget per_task;
  per_task.trials_per_task = 40;
  EXPECT_EQ(round_trials(per_task, 2), 40);
}

}  // namespace
}  // namespace kiln::daemon
