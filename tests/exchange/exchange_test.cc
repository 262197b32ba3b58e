// The exchange types on their own: Task keys, the wire encodings of every type (round trips,
// truncated and malformed frames), digests. This binary links kiln_exchange and nothing that
// links LLVM (tests/exchange/CMakeLists.txt checks that), so it also shows that a process without
// LLVM (a device-side runner, the tracker, the daemon) can use these types.
#include <gtest/gtest.h>

#include <string>

#include "common/sha256.h"
#include "exchange/build_result.h"
#include "exchange/measure_input.h"
#include "exchange/measure_result.h"
#include "exchange/space_cache.h"
#include "exchange/task.h"
#include "ops/registry.h"

namespace kiln {
namespace {

Target znver4() {
  Target t;
  t.triple = "x86_64-pc-linux-gnu";
  t.cpu = "znver4";
  t.features = "+avx512f,+avx2";
  t.explicit_features = true;
  return t;
}

Task dense_task(const std::string& template_name = "dense_pack.x86",
                const std::string& workload = "dense:M=64,N=32,K=16") {
  Task task;
  task.tmpl = ops::find_template(template_name);
  EXPECT_NE(task.tmpl, nullptr) << template_name;
  task.workload = *task.tmpl->normalize(*ops::Workload::parse(workload));
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
  b.manifest.argument_shapes = {{32, 32}, {16, 32}, {1, 2, 32, 16, 2}};
  b.manifest.num_inputs = 2;
  b.manifest.num_outputs = 1;
  b.manifest.stages = {"dense_pack_stage0", "dense_pack_stage1"};
  b.manifest.stage_timed = {false, true};
  b.build_seconds = 0.25;
  return b;
}

MeasureResult sample_measure() {
  MeasureResult m;
  m.error = MeasureError::kWrongAnswer;
  m.message = "output differs from the reference";
  m.costs = {1.5e-3, 1.25e-3};
  m.relative_error = 0.5;
  m.build_seconds = 0.75;
  m.run_seconds = 0.125;
  m.timestamp = 1.7e9;
  m.runner_lost = true;
  return m;
}

template <typename T>
std::string encoded(const T& value) {
  wire::Writer w;
  value.encode(w);
  return w.bytes();
}

TEST(ExchangeTask, EqualKeysForTheSameTemplateWorkloadAndTarget) {
  Task a = dense_task();
  Task b = dense_task("dense_pack.x86", "dense:K=16,N=32,M=64");  // other key order, same task
  EXPECT_EQ(a.key(), b.key());
  EXPECT_EQ(a.key(), "dense_pack.x86|dense:K=16,M=64,N=32,bias=0|" + znver4().to_string());
}

TEST(ExchangeTask, KeysDifferWhenTemplateWorkloadOrTargetDiffer) {
  Task base = dense_task();
  EXPECT_NE(base.key(), dense_task("dense_nopack.x86").key());
  EXPECT_NE(base.key(), dense_task("dense_pack.x86", "dense:M=64,N=32,K=32").key());
  Task other_cpu = base;
  other_cpu.target.cpu = "znver5";
  EXPECT_NE(base.key(), other_cpu.key());
  Task other_triple = base;
  other_triple.target.triple = "aarch64-unknown-linux-gnu";
  other_triple.target.explicit_triple = true;
  EXPECT_NE(base.key(), other_triple.key());
}

TEST(ExchangeTask, KeyIsTheKeyOfTheRecordFields) {
  Task t = dense_task();
  EXPECT_EQ(t.key(), task_key(t.tmpl->name(), t.workload.to_string(), t.target.to_string()));
}

TEST(ExchangeTarget, ToStringWritesOnlyWhatWasGivenExplicitly) {
  Target t;
  t.triple = "x86_64-pc-linux-gnu";
  t.cpu = "x86-64-v3";
  t.features = "+avx2,+fma";
  EXPECT_EQ(t.to_string(), "llvm -mcpu=x86-64-v3");
  t.explicit_features = true;
  EXPECT_EQ(t.to_string(), "llvm -mcpu=x86-64-v3 -mattr=+avx2,+fma");
  t.explicit_triple = true;
  EXPECT_EQ(t.to_string(), "llvm -mcpu=x86-64-v3 -mattr=+avx2,+fma -mtriple=x86_64-pc-linux-gnu");
  EXPECT_EQ(t.simd_lanes(), 8);
}

TEST(ExchangeWire, TaskRoundTrips) {
  Task task = dense_task();
  task.target.explicit_triple = true;
  std::string bytes = encoded(task);
  wire::Reader r(bytes);
  Result<Task> back = Task::decode(r);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->tmpl, task.tmpl);
  EXPECT_EQ(back->workload.to_string(), task.workload.to_string());
  EXPECT_EQ(back->target, task.target);
  EXPECT_EQ(back->key(), task.key());
}

TEST(ExchangeWire, TaskHeaderWithAnUnknownTemplateOrABadWorkloadIsAnError) {
  auto header = [](const std::string& name, const std::string& workload) {
    wire::Writer w;
    w.str(name);
    w.str(workload);
    encode_target(znver4(), w);
    return w.bytes();
  };
  struct Case {
    std::string name, workload, expected;
  };
  for (const Case& c : {
           Case{"no_such.x86", "dense:K=16,M=64,N=32", "unknown template 'no_such.x86'"},
           Case{"dense_pack.x86", "dense:M=64", "dense"},
           Case{"dense_pack.x86", "not a workload", "not a workload"},
       }) {
    std::string bytes = header(c.name, c.workload);
    wire::Reader r(bytes);
    Result<Task> t = Task::decode(r);
    ASSERT_FALSE(t.ok()) << c.name << " " << c.workload;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(c.expected), std::string::npos) << t.status().message();
  }
}

TEST(ExchangeWire, MeasureInputRoundTripsThroughItsEntities) {
  Task task = dense_task();
  ConfigSpace space = task.tmpl->space(task.workload);
  ASSERT_GT(space.range_length(), 3);
  ConfigSpaceCache spaces;
  for (int64_t index : {int64_t{0}, int64_t{1}, space.range_length() - 1}) {
    if (!space.is_index_valid(index)) continue;
    MeasureInput in{task, space.get(index)};
    std::string bytes = encoded(in);
    wire::Reader r(bytes);
    Result<MeasureInput> back = MeasureInput::decode(r, spaces);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->task.key(), task.key());
    EXPECT_EQ(back->config, in.config);
  }
}

TEST(ExchangeWire, MeasureInputWhoseIndexDisagreesWithItsEntitiesIsAnInstantiationError) {
  Task task = dense_task();
  ConfigSpace space = task.tmpl->space(task.workload);
  ConfigEntity lying(space.get(1).index(), space.get(2).entities());
  std::string bytes = encoded(MeasureInput{task, lying});
  wire::Reader r(bytes);
  ConfigSpaceCache spaces;
  Result<MeasureInput> back = MeasureInput::decode(r, spaces);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInstantiation);
  EXPECT_NE(back.status().message().find("config 1 of dense_pack.x86|"), std::string::npos)
      << back.status().message();
  EXPECT_NE(back.status().message().find("disagrees with the entities, which are config 2"),
            std::string::npos)
      << back.status().message();
}

TEST(ExchangeWire, MeasureInputWithEntitiesOutsideTheSpaceIsAnInstantiationError) {
  Task task = dense_task();
  ConfigSpace space = task.tmpl->space(task.workload);
  std::vector<std::pair<std::string, Entity>> entities = space.get(0).entities();
  ASSERT_TRUE(std::holds_alternative<SplitEntity>(entities[0].second));
  entities[0].second = SplitEntity{{-1, 7}};  // 7 divides none of the axis lengths
  std::string bytes = encoded(MeasureInput{task, ConfigEntity(0, entities)});
  wire::Reader r(bytes);
  ConfigSpaceCache spaces;
  Result<MeasureInput> back = MeasureInput::decode(r, spaces);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInstantiation);
  EXPECT_NE(back.status().message().find(entities[0].first), std::string::npos)
      << back.status().message();
}

// T::decode(T::encode(value)) == value, for a result type.
template <typename T>
void expect_round_trip(const T& value) {
  std::string bytes = encoded(value);
  wire::Reader r(bytes);
  Result<T> back = T::decode(r);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, value);
}

TEST(ExchangeWire, BuildResultRoundTrips) {
  expect_round_trip(sample_build());
  BuildResult failed;
  failed.error = MeasureError::kBuildTimeout;
  failed.message = "build exceeded the 10 s timeout";
  expect_round_trip(failed);
}

TEST(ExchangeWire, MeasureResultRoundTrips) {
  expect_round_trip(sample_measure());
  expect_round_trip(MeasureResult{});
}

// Every strict prefix of a frame (a peer that died mid-write, a corrupted length) is an error.
TEST(ExchangeWire, EveryTruncatedFrameIsAnErrorNotACrash) {
  Task task = dense_task();
  ConfigSpaceCache spaces;
  std::string input = encoded(MeasureInput{task, spaces.get(task).get(0)});
  std::string build = encoded(sample_build());
  std::string measure = encoded(sample_measure());
  // decode(reader) for each prefix of `frame` shorter than the frame: never a value.
  auto expect_every_prefix_fails = [](const std::string& frame, const char* type, auto decode) {
    for (size_t n = 0; n < frame.size(); ++n) {
      wire::Reader r(std::string_view(frame).substr(0, n));
      auto decoded = decode(r);
      ASSERT_FALSE(decoded.ok()) << type << " prefix of " << n << " bytes";
      EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(decoded.status().message().find("truncated"), std::string::npos)
          << type << " prefix of " << n << " bytes: " << decoded.status().message();
    }
  };
  expect_every_prefix_fails(input, "MeasureInput",
                            [&](wire::Reader& r) { return MeasureInput::decode(r, spaces); });
  expect_every_prefix_fails(build, "BuildResult", BuildResult::decode);
  expect_every_prefix_fails(measure, "MeasureResult", MeasureResult::decode);
}

TEST(ExchangeWire, AHugeLengthOrAnUnknownErrorCodeIsAnError) {
  wire::Writer huge;
  huge.i64(0);
  huge.u64(uint64_t{1} << 62);  // the message claims 4 EiB
  wire::Reader r1(huge.bytes());
  EXPECT_FALSE(BuildResult::decode(r1).ok());

  MeasureResult m = sample_measure();
  std::string bytes = encoded(m);
  int64_t bad = 42;
  bytes.replace(0, sizeof bad, reinterpret_cast<const char*>(&bad), sizeof bad);
  wire::Reader r2(bytes);
  Result<MeasureResult> back = MeasureResult::decode(r2);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("unknown error code 42"), std::string::npos);
}

TEST(ExchangeDigest, Sha256OfKnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ExchangeDigest, VerifyAcceptsTheBuildersBytesAndRejectsAChangedByteOrNoDigest) {
  BuildResult b = sample_build();
  EXPECT_TRUE(b.verify_digest().ok());
  b.shared_object[5] ^= 1;
  Status changed = b.verify_digest();
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.code(), StatusCode::kRuntime);
  EXPECT_NE(changed.message().find("'dense_pack' does not match its digest"), std::string::npos)
      << changed.message();
  EXPECT_NE(changed.message().find(sample_build().artifact_sha256), std::string::npos);
  b = sample_build();
  b.artifact_sha256.clear();
  EXPECT_FALSE(b.verify_digest().ok());
}

TEST(ExchangeMeasureResult, OfFailedBuildKeepsTheBuildsErrorMessageAndTime) {
  BuildResult b;
  b.error = MeasureError::kCompileHost;
  b.message = "lld: undefined symbol";
  b.build_seconds = 2.5;
  MeasureResult m = MeasureResult::of_failed_build(b);
  EXPECT_EQ(m.error, MeasureError::kCompileHost);
  EXPECT_EQ(m.message, "lld: undefined symbol");
  EXPECT_EQ(m.build_seconds, 2.5);
  EXPECT_TRUE(m.costs.empty());
  EXPECT_GT(m.timestamp, 1.6e9);  // stamped now
}

}  // namespace
}  // namespace kiln
