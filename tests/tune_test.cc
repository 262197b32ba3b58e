// The tuning loop with the real builder processes, the isolated runner and a SQLite store.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "builder/build_pool.h"
#include "builder/target.h"
#include "ops/registry.h"
#include "runner/local_runner.h"
#include "store/open_store.h"
#include "tests/fault_template.h"
#include "tests/warp_env.h"
#include "tuner/make_tuner.h"
#include "tuner/tune_loop.h"

namespace kiln {
namespace {

std::string temp_db(const std::string& name) {
  std::string path =
      (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()) + ".db"))
          .string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

runner::RunnerOptions fast_runner(double timeout_s) {
  runner::RunnerOptions o;
  o.measure.time = {.number = 1, .repeat = 1};
  o.timeout_s = timeout_s;
  o.cooldown_interval_s = 0;
  return o;
}

TEST(Tune, EveryFaultGetsItsErrorCodeAndTheRunFinishes) {
  const ops::Template& tmpl = testing::fault_template();
  ops::Workload w = *tmpl.normalize(*ops::Workload::parse("fault:N=64"));
  ConfigSpace space = tmpl.space(w);
  std::string path = temp_db("faults");
  auto db = store::open_store(path);
  ASSERT_TRUE(db.ok()) << db.status().message();
  // Generous limits: an ASan build on a loaded machine takes seconds for a healthy config.
  builder::LocalBuildPool builder({2, /*timeout_s=*/10});
  runner::LocalRunner runner(fast_runner(/*timeout_s=*/5));
  tuner::GridTuner grid(space);
  tuner::TuneOptions options;
  options.n_trial = space.size();
  Target target = builder::host_target();
  auto done = tuner::tune_task(tmpl, w, target, space, grid, builder, runner, **db, options);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->done, space.size());

  auto records = (*db)->records();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(static_cast<int64_t>(records->size()), space.size());  // every trial is a row
  const std::map<std::string, MeasureError> expected = {
      {"ok", MeasureError::kNoError},
      {"wrong", MeasureError::kWrongAnswer},
      {"segfault", MeasureError::kRuntimeDevice},
      {"hang", MeasureError::kRunTimeout},
      {"build_crash", MeasureError::kCompileHost},
      {"build_hang", MeasureError::kBuildTimeout}};
  std::set<int64_t> indices;
  for (const store::Record& r : *records) {
    indices.insert(r.config_index);
    std::string mode = space.get(r.config_index).other("mode").val.get<std::string>();
    EXPECT_EQ(r.error_no, static_cast<int>(expected.at(mode))) << mode << ": " << r.error_msg;
    if (r.error_no == 0) {
      EXPECT_FALSE(r.costs.empty());
    } else {
      EXPECT_FALSE(r.error_msg.empty()) << mode;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(indices.size()), space.size());

  // The pools recovered: a healthy config still measures after all of that.
  std::vector<MeasureInput> again = {{{&tmpl, w, target}, space.get(0)}};
  auto results = runner.run(again, builder.build(again));
  EXPECT_EQ(results[0].error, MeasureError::kNoError) << results[0].message;
  std::filesystem::remove(path);
}

TEST(Tune, ResumesFromTheStoreWithoutRemeasuring) {
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ops::Workload w = *tmpl->normalize(*ops::Workload::parse("dense:M=16,N=32,K=16"));
  ConfigSpace space = tmpl->space(w);
  std::string path = temp_db("resume");
  auto db = store::open_store(path);
  ASSERT_TRUE(db.ok());
  builder::LocalBuildPool builder({2, 10});
  runner::LocalRunner runner(fast_runner(10));
  Target target = builder::host_target();
  tuner::TuneOptions options;
  options.n_trial = 10;
  {
    tuner::RandomTuner random(space, 7);
    auto p = tuner::tune_task(*tmpl, w, target, space, random, builder, runner, **db, options);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->done, 10);
    EXPECT_EQ(p->resumed, 0);
  }
  options.n_trial = 16;
  tuner::RandomTuner random(space, 7);  // the same seed proposes the same configs first
  auto p = tuner::tune_task(*tmpl, w, target, space, random, builder, runner, **db, options);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->resumed, 10);
  EXPECT_EQ(p->done, 16);
  auto records = (*db)->records();
  ASSERT_EQ(records->size(), 16u);
  std::set<int64_t> indices;
  for (const auto& r : *records) indices.insert(r.config_index);
  EXPECT_EQ(indices.size(), 16u);  // nothing measured twice
  std::filesystem::remove(path);
}

TEST(Tune, PipelinedAndSequentialRunsMeasureTheSameConfigs) {
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ops::Workload w = *tmpl->normalize(*ops::Workload::parse("dense:M=16,N=32,K=16"));
  ConfigSpace space = tmpl->space(w);
  builder::LocalBuildPool builder({2, 10});
  runner::LocalRunner runner(fast_runner(10));
  Target target = builder::host_target();
  std::vector<std::vector<int64_t>> sequences;
  for (bool pipeline : {true, false}) {
    std::string path = temp_db(pipeline ? "pipelined" : "sequential");
    auto db = store::open_store(path);
    ASSERT_TRUE(db.ok());
    tuner::RandomTuner random(space, 3);
    tuner::TuneOptions options;
    options.n_trial = 13;  // not a multiple of the batch size
    options.pipeline = pipeline;
    auto p = tuner::tune_task(*tmpl, w, target, space, random, builder, runner, **db, options);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->done, 13);
    auto records = (*db)->records();
    ASSERT_TRUE(records.ok());
    std::vector<int64_t> sequence;
    for (const store::Record& r : *records) sequence.push_back(r.config_index);
    sequences.push_back(sequence);
    std::filesystem::remove(path);
  }
  EXPECT_EQ(sequences[0], sequences[1]);
  EXPECT_EQ(sequences[0].size(), 13u);
}

// The build clock is the pool's Env: time paused does not count toward the timeout, time
// building does, and nothing here waits for the wall clock to pass the timeout.
TEST(Tune, PausedBuildTimeDoesNotCountTowardTheBuildTimeout) {
  const ops::Template& tmpl = testing::fault_template();
  ops::Workload w = *tmpl.normalize(*ops::Workload::parse("fault:N=64"));
  ConfigSpace space = tmpl.space(w);
  std::optional<ConfigEntity> hang;
  for (int64_t i = 0; i < space.size() && !hang; ++i) {
    if (space.get(i).other("mode").val == "build_hang") hang = space.get(i);
  }
  ASSERT_TRUE(hang);
  testing::WarpEnv env;
  builder::LocalBuildPool pool({1, /*timeout_s=*/60.0, &env});
  std::vector<MeasureInput> inputs = {{{&tmpl, w, builder::host_target()}, *hang}};
  pool.start(inputs);
  pool.pause();
  env.advance(100.0);  // paused: does not count
  pool.resume();
  pool.work_for(0.05);  // serves the pool: a timed-out build would be failed here
  EXPECT_EQ(pool.unbuilt(), 1) << "a build timed out on time spent paused";
  env.advance(61.0);  // building: counts
  std::vector<BuildResult> built = pool.finish();
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].error, MeasureError::kBuildTimeout) << built[0].message;
  EXPECT_EQ(env.spawned(), 1);
}

// A build's reported time excludes the time its worker was stopped for a kernel (it is part of
// each record's all_cost): the worker's own wall clock would count the pause.
TEST(Tune, BuildSecondsExcludeTimePaused) {
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ops::Workload w = *tmpl->normalize(*ops::Workload::parse("dense:M=16,N=32,K=16"));
  ConfigSpace space = tmpl->space(w);
  builder::LocalBuildPool pool({1, 60.0});
  MeasureInput first{{tmpl, w, builder::host_target()}, space.get(0)};
  MeasureInput second{{tmpl, w, builder::host_target()}, space.get(1)};
  pool.build({first});  // starts the worker
  pool.start({second});
  pool.pause();  // the worker has just received the request: it stops mid-build
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::vector<BuildResult> built = pool.finish();
  ASSERT_EQ(built.size(), 1u);
  ASSERT_EQ(built[0].error, MeasureError::kNoError) << built[0].message;
  EXPECT_LT(built[0].build_seconds, 1.5);
}

// A builder that cannot start its worker process fails the config (COMPILE_HOST with the
// reason), never the caller.
TEST(Tune, AWorkerThatCannotBeSpawnedFailsItsConfig) {
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ops::Workload w = *tmpl->normalize(*ops::Workload::parse("dense:M=16,N=32,K=16"));
  ConfigSpace space = tmpl->space(w);
  testing::WarpEnv env;
  env.fail_spawns("fork: Resource temporarily unavailable");
  builder::LocalBuildPool pool({1, 10.0, &env});
  std::vector<BuildResult> built = pool.build({{{tmpl, w, builder::host_target()}, space.get(0)}});
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].error, MeasureError::kCompileHost);
  EXPECT_NE(built[0].message.find("Resource temporarily unavailable"), std::string::npos)
      << built[0].message;
}

// Batches queued ahead build in order, across batches, while the caller idles in work_for();
// a crash or a hang in a later batch costs only that config.
TEST(Tune, BatchesStartedAheadBuildInOrderDuringWorkFor) {
  const ops::Template& tmpl = testing::fault_template();
  ops::Workload w = *tmpl.normalize(*ops::Workload::parse("fault:N=64"));
  ConfigSpace space = tmpl.space(w);
  std::map<std::string, int64_t> index_of;
  for (int64_t i = 0; i < space.size(); ++i) {
    index_of.emplace(space.get(i).other("mode").val.get<std::string>(), i);
  }
  Target target = builder::host_target();
  auto input = [&](const std::string& mode) {
    return MeasureInput{{&tmpl, w, target}, space.get(index_of.at(mode))};
  };
  builder::LocalBuildPool pool({2, /*timeout_s=*/1.5});
  const std::vector<std::vector<std::string>> batches = {
      {"ok", "wrong"}, {"build_hang", "ok", "build_crash"}, {"segfault"}};
  for (const auto& batch : batches) {
    std::vector<MeasureInput> inputs;
    for (const std::string& mode : batch) inputs.push_back(input(mode));
    pool.start(inputs);
  }
  // Idle until every build is done, the hang's timeout included (bounded, in case of a bug).
  for (int i = 0; i < 600 && pool.unbuilt() > 0; ++i) pool.work_for(0.1);
  ASSERT_EQ(pool.unbuilt(), 0);
  const std::map<std::string, MeasureError> expected = {
      {"ok", MeasureError::kNoError},
      {"wrong", MeasureError::kNoError},
      {"segfault", MeasureError::kNoError},
      {"build_crash", MeasureError::kCompileHost},
      {"build_hang", MeasureError::kBuildTimeout}};
  std::vector<std::vector<BuildResult>> results;
  for (size_t b = 0; b < batches.size(); ++b) results.push_back(pool.finish());
  for (size_t b = 0; b < batches.size(); ++b) {
    const std::vector<BuildResult>& built = results[b];
    ASSERT_EQ(built.size(), batches[b].size());
    for (size_t i = 0; i < built.size(); ++i) {
      const std::string& mode = batches[b][i];
      EXPECT_EQ(built[i].error, expected.at(mode)) << mode << ": " << built[i].message;
      // Each result is its own config's kernel.
      if (built[i].error == MeasureError::kNoError) {
        EXPECT_EQ(built[i].shared_object, builder::build_measure_input(input(mode)).shared_object)
            << mode;
      }
    }
  }
}

// prepare() only starts the reference computation; whatever task runs next, each kernel is
// checked against its own task's reference.
TEST(Tune, RunnerPreparesAheadAndChecksEachTaskAgainstItsOwnReference) {
  const ops::Template& tmpl = testing::fault_template();
  Target target = builder::host_target();
  builder::LocalBuildPool pool({1, 10});
  runner::LocalRunner runner(fast_runner(5));
  auto input_for = [&](const std::string& workload, const std::string& mode) {
    ops::Workload w = *tmpl.normalize(*ops::Workload::parse(workload));
    ConfigSpace space = tmpl.space(w);
    for (int64_t i = 0; i < space.size(); ++i) {
      if (space.get(i).other("mode").val.get<std::string>() == mode) {
        return MeasureInput{{&tmpl, w, target}, space.get(i)};
      }
    }
    ADD_FAILURE() << "no config with mode " << mode;
    return MeasureInput{{&tmpl, w, target}, space.get(0)};
  };
  std::vector<MeasureInput> a = {input_for("fault:N=64", "ok"), input_for("fault:N=64", "wrong")};
  std::vector<MeasureInput> b = {input_for("fault:N=32", "ok"), input_for("fault:N=32", "wrong")};
  runner.prepare(a[0]);
  runner.prepare(b[0]);  // one preparation at a time: this one comes when b runs
  for (const auto* inputs : {&b, &a, &b}) {
    std::vector<MeasureResult> results = runner.run(*inputs, pool.build(*inputs));
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0].error, MeasureError::kNoError) << results[0].message;
    EXPECT_EQ(results[1].error, MeasureError::kWrongAnswer) << results[1].message;
  }
}

TEST(Tune, TunersAreDeterministicAndNeverRepeat) {
  const ops::Template* tmpl = ops::find_template("conv2d_NCHWc.x86");
  ops::Workload w = *tmpl->normalize(
      *ops::Workload::parse("conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3"));
  ConfigSpace space = tmpl->space(w);
  tuner::RandomTuner a(space, 42), b(space, 42);
  std::set<int64_t> seen;
  for (int i = 0; i < 40; ++i) {
    auto x = a.next_batch(8), y = b.next_batch(8);
    EXPECT_EQ(x, y);
    for (int64_t v : x) EXPECT_TRUE(seen.insert(v).second);
  }
  EXPECT_EQ(seen.size(), 308u);  // the whole space, each config once
  EXPECT_FALSE(a.has_next());
  EXPECT_TRUE(a.next_batch(4).empty());
  tuner::GridTuner grid(space);
  EXPECT_EQ(grid.next_batch(3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_FALSE(tuner::make_tuner("annealing", {*tmpl, w, space, {}}, 0).ok());
}

}  // namespace
}  // namespace kiln
