// The exchange types at the process seams: what the build pool's workers and the runner process
// do with a config that travels as its entities and an artifact that travels with its digest.
#include <gtest/gtest.h>

#include "builder/build_pool.h"
#include "builder/target.h"
#include "common/sha256.h"
#include "ops/registry.h"
#include "runner/local_runner.h"

namespace kiln {
namespace {

MeasureInput small_dense(int64_t index) {
  Task task;
  task.tmpl = ops::find_template("dense_nopack.x86");
  task.workload = *task.tmpl->normalize(*ops::Workload::parse("dense:M=16,N=16,K=16"));
  task.target = builder::host_target();
  return {task, task.tmpl->space(task.workload).get(index)};
}

runner::RunnerOptions quick_runner() {
  runner::RunnerOptions o;
  o.measure.time = {.number = 1, .repeat = 1};
  o.cooldown_interval_s = 0;
  o.threads = 1;
  return o;
}

TEST(ExchangeSeams, BuildWorkersRebuildTheConfigFromItsEntitiesAndCheckTheIndex) {
  MeasureInput good = small_dense(1);
  MeasureInput lying = good;
  lying.config = ConfigEntity(1, small_dense(2).config.entities());  // index 1, entities of 2
  builder::LocalBuildPool pool({.n_parallel = 1});
  std::vector<BuildResult> built = pool.build({good, lying});
  ASSERT_EQ(built.size(), 2u);
  EXPECT_EQ(built[0].error, MeasureError::kNoError) << built[0].message;
  EXPECT_EQ(built[1].error, MeasureError::kInstantiationError);
  EXPECT_NE(built[1].message.find("disagrees with the entities, which are config 2"),
            std::string::npos)
      << built[1].message;
}

TEST(ExchangeSeams, BuiltArtifactsCarryTheirDigest) {
  builder::LocalBuildPool pool({.n_parallel = 1});
  std::vector<BuildResult> built = pool.build({small_dense(0)});
  ASSERT_EQ(built[0].error, MeasureError::kNoError) << built[0].message;
  EXPECT_EQ(built[0].artifact_sha256, sha256_hex(built[0].shared_object));
  EXPECT_TRUE(built[0].verify_digest().ok());
}

TEST(ExchangeSeams, TheRunnerRefusesAnArtifactWithACorruptedByte) {
  MeasureInput input = small_dense(0);
  BuildResult built = builder::build_measure_input(input);
  ASSERT_EQ(built.error, MeasureError::kNoError) << built.message;
  BuildResult corrupted = built;
  corrupted.shared_object[corrupted.shared_object.size() / 2] ^= 0x20;

  runner::LocalRunner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run({input, input}, {built, corrupted});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error, MeasureError::kNoError) << results[0].message;
  EXPECT_EQ(results[1].error, MeasureError::kRuntimeDevice);
  EXPECT_NE(results[1].message.find("does not match its digest"), std::string::npos)
      << results[1].message;
  EXPECT_NE(results[1].message.find(built.artifact_sha256), std::string::npos);
  EXPECT_TRUE(results[1].costs.empty());
}

TEST(ExchangeSeams, AFailedBuildBecomesItsMeasureResultWithoutRunning) {
  BuildResult failed;
  failed.error = MeasureError::kBuildTimeout;
  failed.message = "build exceeded the 10 s timeout";
  failed.build_seconds = 10;
  runner::LocalRunner runner(quick_runner());
  std::vector<MeasureResult> results = runner.run({small_dense(0)}, {failed});
  EXPECT_EQ(results[0].error, MeasureError::kBuildTimeout);
  EXPECT_EQ(results[0].message, failed.message);
  EXPECT_EQ(results[0].build_seconds, 10);
  EXPECT_EQ(results[0].run_seconds, 0);
}

}  // namespace
}  // namespace kiln
