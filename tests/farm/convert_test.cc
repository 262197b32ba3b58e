// proto/kiln.proto <-> exchange types (farm/convert.h): every type survives a round trip, also
// through the serialized bytes, and every malformed message is kInvalidArgument naming its field.
#include "farm/convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/sha256.h"
#include "farm/tracker_service.h"
#include "ops/registry.h"
#include "ops/template.h"

namespace kiln::farm {
namespace {

using ::testing::HasSubstr;

Target znver4() {
  Target t;
  t.triple = "x86_64-pc-linux-gnu";
  t.cpu = "znver4";
  t.features = "+avx512f,+avx2";
  t.explicit_features = true;
  return t;
}

Task dense_task() {
  Task task;
  task.tmpl = ops::find_template("dense_pack.x86");
  EXPECT_NE(task.tmpl, nullptr);
  task.workload = *task.tmpl->normalize(*ops::Workload::parse("dense:M=64,N=32,K=16"));
  task.target = znver4();
  return task;
}

BuildResult sample_build() {
  BuildResult b;
  b.shared_object = std::string(
      "\x7f"
      "ELF\0\1\2 not really a kernel",
      26);
  b.artifact_sha256 = sha256_hex(b.shared_object);
  b.manifest.name = "dense_pack";
  b.manifest.buffer_elements = {1024, 512, 2048, 77};
  b.manifest.num_inputs = 2;
  b.manifest.num_outputs = 1;
  b.manifest.stages = {"dense_pack_stage0", "dense_pack_stage1"};
  b.manifest.stage_timed = {false, true};
  b.manifest.argument_shapes = {{32, 16}, {4, 16, 4}, {32, 64}};  // data, packed weight, output
  b.build_seconds = 0.25;
  return b;
}

// Serializes and parses a message, as it crosses the wire.
template <typename M>
M through_bytes(const M& m) {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  M back;
  EXPECT_TRUE(back.ParseFromString(bytes));
  return back;
}

void expect_invalid(const Status& s, const std::string& field) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_THAT(s.message(), HasSubstr(field));
}

TEST(FarmConvert, TargetRoundTrip) {
  Target t = znver4();
  Result<Target> back = from_proto(through_bytes(to_proto(t)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, t);
}

TEST(FarmConvert, MalformedTargetsNameTheField) {
  v1::Target p = to_proto(znver4());
  p.set_cpu("znver4 -mattr=+evil");
  expect_invalid(from_proto(p).status(), "Target.cpu");
  p = to_proto(znver4());
  p.set_features("+avx2|x");
  expect_invalid(from_proto(p).status(), "Target.features");
  p = to_proto(znver4());
  p.set_cpu("");
  expect_invalid(from_proto(p).status(), "Target.cpu: is empty");
}

TEST(FarmConvert, MeasureInputRoundTripKeepsTheConfig) {
  Task task = dense_task();
  ConfigSpaceCache spaces;
  const ConfigSpace& space = spaces.get(task);
  ASSERT_GT(space.range_length(), 7);
  MeasureInput in{task, space.get(7)};
  v1::MeasureInput p = through_bytes(to_proto(in));
  EXPECT_EQ(p.config().index(), 7);
  EXPECT_THAT(p.config().entities_json(), HasSubstr("tile_"));  // the entity list travels
  Result<MeasureInput> back = from_proto(p, spaces);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->task.key(), task.key());
  EXPECT_EQ(back->config, in.config);
}

TEST(FarmConvert, MalformedMeasureInputsNameTheField) {
  Task task = dense_task();
  ConfigSpaceCache spaces;
  MeasureInput in{task, spaces.get(task).get(3)};
  const v1::MeasureInput good = to_proto(in);

  v1::MeasureInput p = good;
  p.clear_task();
  expect_invalid(from_proto(p, spaces).status(), "MeasureInput.task: is missing");
  p = good;
  p.mutable_task()->set_template_name("no_such.x86");
  expect_invalid(from_proto(p, spaces).status(), "MeasureInput.task.template_name");
  p = good;
  p.mutable_task()->set_workload("dense:M=64");
  expect_invalid(from_proto(p, spaces).status(), "MeasureInput.task.workload");
  p = good;
  p.mutable_task()->set_workload("dense:N=32,M=64,K=16");  // valid, but not normalized
  expect_invalid(from_proto(p, spaces).status(), "MeasureInput.task.workload: is not normalized");
  p = good;
  p.mutable_task()->clear_target();
  expect_invalid(from_proto(p, spaces).status(), "MeasureInput.task.target: is missing");
  p = good;
  p.mutable_config()->set_entities_json("[[\"tile_y\", ");
  expect_invalid(from_proto(p, spaces).status(), "MeasureInput.config.entities_json: is not JSON");
  p = good;
  p.mutable_config()->set_entities_json("{\"a\": 1}");
  expect_invalid(from_proto(p, spaces).status(), "MeasureInput.config.entities_json");

  // Well-formed, but not this space's config: an instantiation error, as AutoTVM reports it.
  p = good;
  p.mutable_config()->set_index(4);
  Status s = from_proto(p, spaces).status();
  EXPECT_EQ(s.code(), StatusCode::kInstantiation);
  EXPECT_THAT(s.message(), HasSubstr("the index disagrees with the entities, which are config 3"));
  p = good;
  p.mutable_config()->set_entities_json("[[\"tile_y\", \"sp\", [-1, 999]]]");
  EXPECT_EQ(from_proto(p, spaces).status().code(), StatusCode::kInstantiation);
}

TEST(FarmConvert, MeasureOptionsRoundTripAndBounds) {
  MeasureOptions o;
  o.time.number = 7;
  o.time.repeat = 2;
  o.time.min_repeat_ms = 150;
  o.time.enable_cpu_cache_flush = true;
  o.input_seed = 1234567890123ull;
  o.tolerance = 2e-3;
  o.timeout_s = 4.5;
  o.cooldown_interval_s = 0;
  o.threads = 2;
  o.build_timeout_s = 20;
  Result<MeasureOptions> back = from_proto(through_bytes(to_proto(o)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, o);

  // An all-default message is not a silent "measure zero times".
  expect_invalid(from_proto(v1::MeasureOptions()).status(), "MeasureOptions.number");
  v1::MeasureOptions p = to_proto(o);
  p.set_repeat(0);
  expect_invalid(from_proto(p).status(), "MeasureOptions.repeat");
  p = to_proto(o);
  p.set_timeout_s(std::numeric_limits<double>::quiet_NaN());
  expect_invalid(from_proto(p).status(), "MeasureOptions.timeout_s: must be a finite number");
  p = to_proto(o);
  p.set_tolerance(0);
  expect_invalid(from_proto(p).status(), "MeasureOptions.tolerance");
  p = to_proto(o);
  p.set_threads(-1);
  expect_invalid(from_proto(p).status(), "MeasureOptions.threads");
  p = to_proto(o);
  p.set_cooldown_interval_s(-0.5);
  expect_invalid(from_proto(p).status(), "MeasureOptions.cooldown_interval_s");
  p = to_proto(o);
  p.set_build_timeout_s(1e9);
  expect_invalid(from_proto(p).status(), "MeasureOptions.build_timeout_s");
}

TEST(FarmConvert, BuildResultRoundTripKeepsArtifactBytesAndDigest) {
  BuildResult b = sample_build();
  v1::BuildResult p = through_bytes(to_proto(b));
  EXPECT_EQ(p.artifact().size(), 26u);  // bytes, NULs included
  Result<BuildResult> back = from_proto(p);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, b);
  EXPECT_TRUE(back->verify_digest().ok());

  BuildResult failed;
  failed.error = MeasureError::kBuildTimeout;
  failed.message = "build took longer than 10 s";
  failed.build_seconds = 10;
  Result<BuildResult> failed_back = from_proto(through_bytes(to_proto(failed)));
  ASSERT_TRUE(failed_back.ok()) << failed_back.status().message();
  EXPECT_EQ(*failed_back, failed);
}

TEST(FarmConvert, MalformedBuildResultsNameTheField) {
  const v1::BuildResult good = to_proto(sample_build());
  v1::BuildResult p = good;
  p.set_error_no(static_cast<v1::MeasureErrorNo>(9));
  expect_invalid(from_proto(p).status(), "BuildResult.error_no: unknown error number 9");
  p = good;
  p.set_sha256("ABC");
  expect_invalid(from_proto(p).status(), "BuildResult.sha256");
  p = good;
  p.clear_sha256();
  expect_invalid(from_proto(p).status(), "BuildResult.sha256: is missing");
  p = good;
  p.clear_artifact();
  expect_invalid(from_proto(p).status(), "BuildResult.artifact");
  p = good;
  p.mutable_manifest()->set_num_inputs(5);
  expect_invalid(from_proto(p).status(), "BuildResult.manifest.num_inputs");
  p = good;
  p.mutable_manifest()->set_num_outputs(3);  // 2 inputs + 3 outputs > 4 buffers
  expect_invalid(from_proto(p).status(), "BuildResult.manifest.num_outputs");
  p = good;
  p.mutable_manifest()->add_argument_shapes()->add_dims(4);  // 4 shapes for 3 arguments
  expect_invalid(from_proto(p).status(), "BuildResult.manifest.argument_shapes");
  p = good;
  p.mutable_manifest()->mutable_argument_shapes(1)->set_dims(0, 0);
  expect_invalid(from_proto(p).status(), "BuildResult.manifest.argument_shapes[1].dims[0]");
  p = good;
  p.mutable_manifest()->add_stage_timed(true);
  expect_invalid(from_proto(p).status(), "BuildResult.manifest.stage_timed");
  p = good;
  p.mutable_manifest()->set_buffer_elements(1, -4);
  expect_invalid(from_proto(p).status(), "BuildResult.manifest.buffer_elements[1]");
  p = good;
  p.mutable_manifest()->set_stages(0, "a;rm -rf");
  expect_invalid(from_proto(p).status(), "BuildResult.manifest.stages[0]");
  p = good;
  p.set_build_seconds(-1);
  expect_invalid(from_proto(p).status(), "BuildResult.build_seconds");

  // A digest that is well-formed but wrong converts; the runner's verify_digest refuses it.
  p = good;
  p.set_sha256(std::string(64, 'a'));
  Result<BuildResult> wrong = from_proto(p);
  ASSERT_TRUE(wrong.ok()) << wrong.status().message();
  EXPECT_FALSE(wrong->verify_digest().ok());
}

TEST(FarmConvert, MeasureResultRoundTripAndErrorCodes) {
  MeasureResult m;
  m.costs = {1.5e-3, 1.25e-3, 1.75e-3};
  m.relative_error = 1e-6;
  m.build_seconds = 0.75;
  m.run_seconds = 0.125;
  m.timestamp = 1.7e9;
  Result<MeasureResult> back = from_proto(through_bytes(to_proto(m)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, m);

  // Every AutoTVM error number keeps its value on the wire.
  for (int e = 1; e <= kMaxMeasureError; ++e) {
    MeasureResult f = MeasureResult::failure(static_cast<MeasureError>(e), "why");
    f.runner_lost = e == static_cast<int>(MeasureError::kRuntimeDevice);
    v1::MeasureResult p = through_bytes(to_proto(f));
    EXPECT_EQ(static_cast<int>(p.error_no()), e);
    Result<MeasureResult> fb = from_proto(p);
    ASSERT_TRUE(fb.ok()) << fb.status().message();
    EXPECT_EQ(*fb, f);
  }
  EXPECT_EQ(v1::RUN_TIMEOUT, static_cast<int>(MeasureError::kRunTimeout));
  EXPECT_EQ(v1::UNKNOWN_ERROR, static_cast<int>(MeasureError::kUnknownError));
}

TEST(FarmConvert, MalformedMeasureResultsNameTheField) {
  MeasureResult m;
  m.costs = {1e-3};
  m.timestamp = 1.7e9;
  const v1::MeasureResult good = to_proto(m);
  v1::MeasureResult p = good;
  p.set_error_no(static_cast<v1::MeasureErrorNo>(-1));
  expect_invalid(from_proto(p).status(), "MeasureResult.error_no");
  p = good;
  p.set_costs(0, -1e-3);
  expect_invalid(from_proto(p).status(), "MeasureResult.costs[0]");
  p = good;
  p.add_costs(std::numeric_limits<double>::infinity());
  expect_invalid(from_proto(p).status(), "MeasureResult.costs[1]");
  p = good;
  p.clear_costs();
  expect_invalid(from_proto(p).status(), "MeasureResult.costs: is empty");
  p = good;
  p.set_timestamp(std::nan(""));
  expect_invalid(from_proto(p).status(), "MeasureResult.timestamp");
  p = good;
  p.set_runner_lost(true);
  expect_invalid(from_proto(p).status(), "MeasureResult.runner_lost");
}

TEST(FarmConvert, RunnerCapabilitiesRoundTripAndValidation) {
  RunnerCapabilities c;
  c.key = "znver5-2c";
  c.name = "box1.runner-0";
  c.address = "10.0.0.7:9191";
  c.target = znver4();
  c.cores = 2;
  c.kiln_version = "0.1.0";
  Result<RunnerCapabilities> back = from_proto(through_bytes(to_proto(c)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, c);
  c.address = "[::1]:80";
  EXPECT_TRUE(from_proto(to_proto(c)).ok());
  c.address = "10.0.0.7:9191";

  const v1::RunnerCapabilities good = to_proto(c);
  v1::RunnerCapabilities p = good;
  p.set_key("");
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.key: is empty");
  p = good;
  p.set_key("znver5 2c");
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.key");
  p = good;
  p.set_name(std::string(65, 'n'));
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.name");
  p = good;
  p.set_address("10.0.0.7");
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.address");
  p = good;
  p.set_address("10.0.0.7:70000");
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.address");
  p = good;
  p.set_cores(0);
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.cores");
  p = good;
  p.clear_target();
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.target: is missing");
  p = good;
  p.set_kiln_version("");
  expect_invalid(from_proto(p).status(), "RunnerCapabilities.kiln_version");
}

}  // namespace
}  // namespace kiln::farm

namespace kiln::farm {
namespace {

// The tracker's status reply (farm/tracker_service.h) carries every field of its report.
TEST(FarmConvert, FarmStatusRoundTripKeepsEveryField) {
  FarmReport r;
  r.keys.push_back(KeyReport{"znver4-2c", 1, 2, 3, 4});
  RunnerReport rr;
  rr.runner_id = "runner-7";
  rr.capabilities =
      RunnerCapabilities{"znver4-2c", "board-1", "127.0.0.1:9190", znver4(), 2, "kiln 0.9"};
  rr.state = RunnerState::kQuarantined;
  rr.trials = 11;
  rr.errors = 3;
  rr.consecutive_faults = 2;
  rr.last_seen_s_ago = 1.5;
  rr.quarantine_reason = "3 faults in a row";
  rr.quarantine_left_s = 30;
  rr.lease_client = "tuner-a";
  r.runners.push_back(rr);

  v1::FarmStatus wire;
  ASSERT_TRUE(wire.ParseFromString(to_proto(r).SerializeAsString()));
  FarmReport back = from_proto(wire);
  ASSERT_EQ(back.keys.size(), 1u);
  EXPECT_EQ(back.keys[0].key, "znver4-2c");
  EXPECT_EQ(back.keys[0].free, 1);
  EXPECT_EQ(back.keys[0].busy, 2);
  EXPECT_EQ(back.keys[0].quarantined, 3);
  EXPECT_EQ(back.keys[0].queued, 4);
  ASSERT_EQ(back.runners.size(), 1u);
  const RunnerReport& b = back.runners[0];
  EXPECT_EQ(b.runner_id, rr.runner_id);
  EXPECT_EQ(b.capabilities, rr.capabilities);
  EXPECT_EQ(b.state, rr.state);
  EXPECT_EQ(b.trials, rr.trials);
  EXPECT_EQ(b.errors, rr.errors);
  EXPECT_EQ(b.consecutive_faults, rr.consecutive_faults);
  EXPECT_EQ(b.last_seen_s_ago, rr.last_seen_s_ago);
  EXPECT_EQ(b.quarantine_reason, rr.quarantine_reason);
  EXPECT_EQ(b.quarantine_left_s, rr.quarantine_left_s);
  EXPECT_EQ(b.lease_client, rr.lease_client);
}

}  // namespace
}  // namespace kiln::farm
