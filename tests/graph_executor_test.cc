// Tests for the compiled-model format (runtime/model_artifact.h), the memory planner
// (runtime/memory_plan.h) and the GraphExecutor, on a hand-made model (tests/hand_model.h).
#include "runtime/graph_executor.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "gtest/gtest.h"
#include "runtime/memory_plan.h"
#include "runtime/model_artifact.h"
#include "tests/hand_model.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using testing::hand_model;
using testing::hand_model_expected_out;
using testing::hand_model_expected_t5;
using testing::hand_model_input;
using testing::kN;

std::unique_ptr<GraphExecutor> MakeExecutor(ModelArtifact model, int threads = 1) {
  auto exec = GraphExecutor::create(std::move(model), threads, "hand.kiln");
  EXPECT_TRUE(exec.ok()) << exec.status().message();
  return exec.ok() ? std::move(exec).value() : nullptr;
}

void ExpectSpanEq(std::span<const float> got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k], want[k]) << "element " << k;
}

// The parse error of `bytes`, or "" if it parsed.
std::string ParseError(std::string_view bytes) {
  auto parsed = parse_model(bytes, "m.kiln");
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message().rfind("m.kiln: ", 0), 0u) << parsed.status().message();
  return parsed.status().message();
}

// ---------------------------------------------------------------------------------------------
// The file format

TEST(ModelArtifactTest, SerializeParseRoundTrip) {
  ModelArtifact m = hand_model(/*second_output=*/true);
  m.values.push_back({"x_tail", {kN / 4}, ModelValueKind::kView, 0, 0, 3 * kN / 4});
  m.steps[1].config_source = "tuned";
  m.steps[1].flop = 12345;
  auto parsed = parse_model(serialize_model(m), "m.kiln");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->kiln_version, m.kiln_version);
  EXPECT_EQ(parsed->target, m.target);
  EXPECT_EQ(parsed->cpu_features, m.cpu_features);
  ASSERT_EQ(parsed->values.size(), m.values.size());
  for (size_t i = 0; i < m.values.size(); ++i) {
    EXPECT_EQ(parsed->values[i].name, m.values[i].name);
    EXPECT_EQ(parsed->values[i].shape, m.values[i].shape);
    EXPECT_EQ(parsed->values[i].kind, m.values[i].kind);
    EXPECT_EQ(parsed->values[i].constant_offset, m.values[i].constant_offset);
    EXPECT_EQ(parsed->values[i].view_of, m.values[i].view_of);
    EXPECT_EQ(parsed->values[i].view_offset, m.values[i].view_offset);
  }
  EXPECT_EQ(parsed->inputs, m.inputs);
  EXPECT_EQ(parsed->outputs, m.outputs);
  ASSERT_EQ(parsed->steps.size(), m.steps.size());
  for (size_t i = 0; i < m.steps.size(); ++i) {
    EXPECT_EQ(parsed->steps[i].symbol, m.steps[i].symbol);
    EXPECT_EQ(parsed->steps[i].buffers, m.steps[i].buffers);
    EXPECT_EQ(parsed->steps[i].label, m.steps[i].label);
    EXPECT_EQ(parsed->steps[i].config_source, m.steps[i].config_source);
    EXPECT_EQ(parsed->steps[i].flop, m.steps[i].flop);
  }
  EXPECT_EQ(parsed->shared_object, m.shared_object);
  EXPECT_EQ(parsed->constants, m.constants);
  // Serializing is deterministic: the same model gives the same bytes.
  EXPECT_EQ(serialize_model(*parsed), serialize_model(m));
}

TEST(ModelArtifactTest, FileRoundTripAndIoErrors) {
  testing::TempDir dir;
  const std::string path = dir.file("m.kiln");
  ASSERT_TRUE(write_model_file(hand_model(), path).ok());
  auto read = read_model_file(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->constants, hand_model().constants);
  auto missing = read_model_file(dir.file("absent.kiln"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
  EXPECT_NE(missing.status().message().find("absent.kiln"), std::string::npos);
  EXPECT_EQ(write_model_file(hand_model(), dir.file("no/such/dir/m.kiln")).code(), StatusCode::kIo);
}

TEST(ModelArtifactTest, TruncatedFilesAreRejected) {
  const std::string bytes = serialize_model(hand_model());
  for (size_t len :
       {size_t{0}, size_t{5}, size_t{8}, size_t{11}, size_t{12}, size_t{19}, size_t{100},
        bytes.size() / 2, bytes.size() - 33, bytes.size() - 32, bytes.size() - 1}) {
    SCOPED_TRACE("length " + std::to_string(len));
    const std::string error = ParseError(std::string_view(bytes).substr(0, len));
    ASSERT_NE(error, "");
    if (len < 8) {
      EXPECT_NE(error.find("not a kiln model"), std::string::npos) << error;
    } else {
      EXPECT_NE(error.find("truncated"), std::string::npos) << error;
    }
  }
  EXPECT_NE(ParseError(bytes + "x").find("after the SHA-256 trailer"), std::string::npos);
}

TEST(ModelArtifactTest, FlippedBytesFailTheChecksum) {
  const std::string bytes = serialize_model(hand_model());
  // In the header, the shared object, the constants and the trailer itself.
  for (size_t at : {size_t{40}, bytes.size() / 2, bytes.size() - 40, bytes.size() - 1}) {
    std::string corrupt = bytes;
    corrupt[at] ^= 0x10;
    const std::string error = ParseError(corrupt);
    EXPECT_NE(error.find("checksum mismatch"), std::string::npos) << "byte " << at << ": " << error;
  }
}

TEST(ModelArtifactTest, BadMagicAndFutureVersion) {
  std::string bytes = serialize_model(hand_model());
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_NE(ParseError(bad_magic).find("not a kiln model"), std::string::npos);
  std::string future = bytes;
  future[8] = static_cast<char>(kModelFormatVersion + 1);
  const std::string error = ParseError(future);
  EXPECT_NE(error.find("format version " + std::to_string(kModelFormatVersion + 1)),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("reads versions 1 to " + std::to_string(kModelFormatVersion)),
            std::string::npos)
      << error;
}

TEST(ModelArtifactTest, InconsistentHeadersAreRejected) {
  struct Case {
    const char* name;
    void (*corrupt)(ModelArtifact&);
    const char* expected;
  };
  const Case cases[] = {
      {"step value id", [](ModelArtifact& m) { m.steps[2].buffers[1] = 99; },
       "step 2 ('t3 = t2 + 1') uses value id 99, out of range"},
      {"negative value id", [](ModelArtifact& m) { m.steps[0].buffers[0] = -2; },
       "uses value id -2"},
      {"output id", [](ModelArtifact& m) { m.outputs[0] = 10; }, "graph output id 10"},
      {"input id", [](ModelArtifact& m) { m.inputs[0] = 42; }, "graph input id 42"},
      {"input kind", [](ModelArtifact& m) { m.inputs.push_back(2); }, "is of kind 'intermediate'"},
      {"unlisted input", [](ModelArtifact& m) { m.inputs.clear(); },
       "is not among the graph inputs"},
      {"constant beyond blob", [](ModelArtifact& m) { m.values[1].constant_offset = 17; },
       "beyond the constants blob"},
      {"negative constant offset", [](ModelArtifact& m) { m.values[1].constant_offset = -1; },
       "beyond the constants blob"},
      {"int64 input", [](ModelArtifact& m) { m.values[0].dtype = ModelDType::kInt64; },
       "is int64, which only constants may be"},
      {"negative dimension", [](ModelArtifact& m) { m.values[3].shape = {-4}; },
       "value 3 ('t2') has shape [-4]"},
      {"huge shape",
       [](ModelArtifact& m) {
         m.values[3].shape = {1 << 30, 1 << 30, 1 << 30};
       },
       "the size reasonable"},
      {"view larger than its value",
       [](ModelArtifact& m) {
         m.values[8].shape = {64, 32};
       },
       "has 2048 elements from offset 0"},
      {"view target", [](ModelArtifact& m) { m.values[8].view_of = 8; }, "views value id 8"},
      {"view past the end",
       [](ModelArtifact& m) {
         m.values[8].shape = {kN / 2};
         m.values[8].view_offset = kN / 2 + 1;
       },
       "has 512 elements from offset 513"},
      {"negative view offset", [](ModelArtifact& m) { m.values[8].view_offset = -16; },
       "from offset -16"},
      {"part of an int64 constant",
       [](ModelArtifact& m) {
         m.values[1].dtype = ModelDType::kInt64;
         m.values[1].shape = {4};
         m.values[8].view_of = 1;
         m.values[8].shape = {2};
       },
       "only float32 values have views of a part"},
      {"view cycle",
       [](ModelArtifact& m) {
         m.values[7].kind = ModelValueKind::kView;
         m.values[7].view_of = 8;
       },
       "form a cycle"},
      {"no symbol", [](ModelArtifact& m) { m.steps[1].symbol = ""; }, "names no symbol"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ModelArtifact m = hand_model();
    c.corrupt(m);
    const std::string error = ParseError(serialize_model(m));
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
    // The executor validates a model handed to it in memory the same way.
    auto exec = GraphExecutor::create(m, 1, "mem");
    ASSERT_FALSE(exec.ok());
    EXPECT_NE(exec.status().message().find(c.expected), std::string::npos)
        << exec.status().message();
  }
}

// Replaces the trailer of `bytes` (a serialized model) by the SHA-256 of the rest, so that a
// test can change the contents and still get past the checksum.
std::string Reseal(std::string bytes) {
  bytes.resize(bytes.size() - 32);
  const std::string hex = sha256_hex(bytes);
  for (size_t i = 0; i < 32; ++i) {
    bytes += static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return bytes;
}

// Replaces the first `from` in the serialized model by `to` (of the same length, so that the
// header length stays right) and reseals it.
std::string EditHeader(const std::string& from, const std::string& to) {
  EXPECT_EQ(from.size(), to.size());
  std::string bytes = serialize_model(hand_model());
  const size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) bytes.replace(at, from.size(), to);
  return Reseal(bytes);
}

// Version 1 (before views at an offset) has the same header otherwise: its files still load.
TEST(ModelArtifactTest, VersionOneFilesStillParse) {
  std::string bytes = serialize_model(hand_model());
  bytes[8] = 1;
  auto parsed = parse_model(Reseal(bytes), "old.kiln");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->values.size(), hand_model().values.size());
}

TEST(ModelArtifactTest, MalformedHeadersPastTheChecksum) {
  // The resealed original parses: Reseal computes the trailer as serialize_model does.
  ASSERT_EQ(ParseError(Reseal(serialize_model(hand_model()))), "");
  EXPECT_NE(ParseError(EditHeader("\"input\"", "\"inpux\"")).find("unknown kind 'inpux'"),
            std::string::npos);
  EXPECT_NE(ParseError(EditHeader("{\"", "[\"")).find("malformed header"), std::string::npos);
  EXPECT_NE(ParseError(EditHeader("\"steps\"", "\"stepz\"")).find("malformed header"),
            std::string::npos);
  EXPECT_NE(ParseError(EditHeader("\"shape\":[1024]", "\"shape\":\"1024\"")).find("malformed"),
            std::string::npos);
}

TEST(ModelArtifactTest, AStepsFlopMustBePositive) {
  ModelArtifact m = hand_model();
  m.steps[1].flop = 12345;
  std::string bytes = serialize_model(m);
  const size_t at = bytes.find("\"flop\":12345.0");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 14, "\"flop\":-2345.0");
  const std::string error = ParseError(Reseal(bytes));
  EXPECT_NE(error.find("has flop -2345.0 (expected a positive number)"), std::string::npos)
      << error;
}

TEST(ModelArtifactTest, ConstantsNotWholeFloats) {
  // A header and an object of zero bytes, then 5 bytes of constants.
  std::string bytes = "KILNMODL";
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes += static_cast<char>(v >> (8 * i));
  };
  bytes += std::string("\x01\x00\x00\x00", 4);
  u64(0);
  u64(0);
  u64(5);
  bytes += "abcde";
  bytes += std::string(32, '\0');
  EXPECT_NE(ParseError(Reseal(bytes)).find("5 bytes, not a whole number of float32"),
            std::string::npos);
}

TEST(ModelArtifactTest, CpuFeatures) {
  EXPECT_TRUE(check_cpu_features({}, "llvm").ok());
  EXPECT_TRUE(check_cpu_features({"sse2"}, "llvm -mtriple=x86_64-pc-linux-gnu").ok());
  Status unknown = check_cpu_features({"sse2", "avx9000"}, "llvm");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("'avx9000', which is unknown to this kiln"), std::string::npos)
      << unknown.message();
  Status foreign = check_cpu_features({}, "llvm -mtriple=aarch64-linux-gnu");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.message().find("foreign target"), std::string::npos) << foreign.message();
  for (const char* name : {"sse4.2", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512dq",
                           "avx512cd", "avx512bw", "avx512vl", "avx512vnni", "avx512bf16"}) {
    const auto& known = checkable_cpu_features();
    EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
    // Known: either supported or reported as missing by this CPU, never as unknown.
    Status s = check_cpu_features({name}, "llvm");
    if (!s.ok()) {
      EXPECT_NE(s.message().find("this CPU lacks"), std::string::npos) << s.message();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The memory planner

TEST(MemoryPlanTest, ChainReusesMemory) {
  // t1..t4 of a chain: each is live while the next is written.
  const MemoryPlan plan = plan_memory({{4096, 0, 1}, {4096, 1, 2}, {4096, 2, 3}, {4096, 3, 4}});
  EXPECT_EQ(plan.unplanned_bytes, 4 * 4096);
  EXPECT_EQ(plan.arena_bytes, 2 * 4096);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
}

TEST(MemoryPlanTest, RandomIntervalsNeverOverlapWhileLive) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 30);
    std::vector<LiveBuffer> buffers;
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 20);
      buffers.push_back(
          {1 + static_cast<int64_t>(rng() % 5000), first, first + static_cast<int>(rng() % 6)});
    }
    const MemoryPlan plan = plan_memory(buffers);
    int64_t peak = 0;  // the most bytes live at one step: no plan can do better
    for (int s = 0; s < 26; ++s) {
      int64_t live = 0;
      for (const LiveBuffer& b : buffers) {
        if (b.first_step <= s && s <= b.last_step) live += (b.bytes + 63) / 64 * 64;
      }
      peak = std::max(peak, live);
    }
    EXPECT_GE(plan.arena_bytes, peak);
    EXPECT_LE(plan.arena_bytes, plan.unplanned_bytes);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(plan.offsets[i] % kArenaAlignment, 0);
      ASSERT_LE(plan.offsets[i] + buffers[i].bytes, plan.arena_bytes);
      for (int j = 0; j < i; ++j) {
        const bool live_together = buffers[i].first_step <= buffers[j].last_step &&
                                   buffers[j].first_step <= buffers[i].last_step;
        const bool share_bytes = plan.offsets[i] < plan.offsets[j] + buffers[j].bytes &&
                                 plan.offsets[j] < plan.offsets[i] + buffers[i].bytes;
        ASSERT_FALSE(live_together && share_bytes) << "trial " << trial << ": " << i << ", " << j;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The executor

TEST(GraphExecutorTest, RunsTheModel) {
  auto exec = MakeExecutor(hand_model());
  ASSERT_NE(exec, nullptr);
  ASSERT_EQ(exec->num_inputs(), 1);
  ASSERT_EQ(exec->num_outputs(), 1);
  EXPECT_EQ(exec->input_info(0).name, "x");
  EXPECT_EQ(exec->output_info(0).shape, std::vector<int64_t>{kN});
  const std::vector<float> x = hand_model_input();
  ASSERT_TRUE(exec->set_input("x", x).ok());
  exec->run();
  ExpectSpanEq(exec->get_output(0), hand_model_expected_out(x));
  // A second run with another input gives that input's result.
  std::vector<float> x2 = x;
  for (float& v : x2) v = -v;
  ASSERT_TRUE(exec->set_input("x", x2).ok());
  exec->run();
  ExpectSpanEq(exec->get_output(0), hand_model_expected_out(x2));
}

TEST(GraphExecutorTest, PlanReusesMemoryAndPoisonedArenaDoesNotMatter) {
  for (bool second_output : {false, true}) {
    SCOPED_TRACE(second_output ? "t5 is an output" : "one output");
    auto exec = MakeExecutor(hand_model(second_output));
    ASSERT_NE(exec, nullptr);
    // Six intermediates of kN floats; at most three are live at once (t4, ws, t5 in step 4).
    const int64_t bytes = kN * 4;
    EXPECT_EQ(exec->unplanned_bytes(), 6 * bytes);
    EXPECT_EQ(exec->arena_bytes(), 3 * bytes);
    EXPECT_LT(exec->arena_bytes(), exec->unplanned_bytes());
    ASSERT_EQ(exec->arena().size(), static_cast<size_t>(3 * kN));
    const std::vector<float> x = hand_model_input();
    ASSERT_TRUE(exec->set_input("x", x).ok());
    for (int round = 0; round < 2; ++round) {
      // Any stale or overlapping read of the arena would carry a NaN into the outputs.
      std::fill(exec->arena().begin(), exec->arena().end(), std::nanf(""));
      exec->run();
      ExpectSpanEq(exec->get_output(0), hand_model_expected_out(x));
      if (second_output) {
        EXPECT_EQ(exec->output_info(1).name, "t5v");
        EXPECT_EQ(exec->output_info(1).shape, (std::vector<int64_t>{16, kN / 16}));
        ExpectSpanEq(exec->get_output(1), hand_model_expected_t5(x));
      }
    }
  }
}

TEST(GraphExecutorTest, OneAndTwoThreadsAgree) {
  const std::vector<float> x = hand_model_input();
  for (int threads : {1, 2}) {
    auto exec = MakeExecutor(hand_model(), threads);
    ASSERT_NE(exec, nullptr);
    EXPECT_EQ(exec->threads(), threads);
    ASSERT_TRUE(exec->set_input("x", x).ok());
    exec->run();
    ExpectSpanEq(exec->get_output(0), hand_model_expected_out(x));
    exec->set_threads(3 - threads);
    EXPECT_EQ(exec->threads(), 3 - threads);
    exec->run();
    ExpectSpanEq(exec->get_output(0), hand_model_expected_out(x));
  }
}

TEST(GraphExecutorTest, AnIntermediateOutputOutlivesLaterSteps) {
  // t2 is last read by step 2; as an output its bytes must not be reused by t4 or t5.
  ModelArtifact m = hand_model();
  m.outputs.push_back(3);
  auto exec = MakeExecutor(m);
  ASSERT_NE(exec, nullptr);
  const std::vector<float> x = hand_model_input();
  ASSERT_TRUE(exec->set_input("x", x).ok());
  std::fill(exec->arena().begin(), exec->arena().end(), std::nanf(""));
  exec->run();
  std::vector<float> t2(kN);
  for (int64_t k = 0; k < kN; ++k) t2[k] = 2 * (x[k] + m.constants[testing::kConstantOffset + k]);
  ExpectSpanEq(exec->get_output(1), t2);
  ExpectSpanEq(exec->get_output(0), hand_model_expected_out(x));
}

TEST(GraphExecutorTest, OutputViewOfAnInputNeedsNoStep) {
  ModelArtifact m = hand_model();
  m.values.push_back({"x_view", {2, kN / 2}, ModelValueKind::kView, 0, 0});  // value 10
  m.outputs.push_back(10);
  auto exec = MakeExecutor(m);
  ASSERT_NE(exec, nullptr);
  const std::vector<float> x = hand_model_input();
  ASSERT_TRUE(exec->set_input("x", x).ok());
  exec->run();
  ExpectSpanEq(exec->get_output(1), x);
}

// A view at an offset reads the elements from there on (an input of an in-place Concat).
TEST(GraphExecutorTest, AViewAtAnOffsetStartsThere) {
  ModelArtifact m = hand_model();
  m.values.push_back({"x_tail", {kN / 4}, ModelValueKind::kView, 0, 0, 3 * kN / 4});    // 10
  m.values.push_back({"x_tail_tail", {kN / 8}, ModelValueKind::kView, 0, 10, kN / 8});  // 11
  m.outputs.push_back(10);
  m.outputs.push_back(11);
  auto exec = MakeExecutor(m);
  ASSERT_NE(exec, nullptr);
  const std::vector<float> x = hand_model_input();
  ASSERT_TRUE(exec->set_input("x", x).ok());
  exec->run();
  ExpectSpanEq(exec->get_output(1), std::vector<float>(x.begin() + 3 * kN / 4, x.end()));
  ExpectSpanEq(exec->get_output(2), std::vector<float>(x.begin() + 7 * kN / 8, x.end()));
}

TEST(GraphExecutorTest, RejectsBadInputs) {
  auto exec = MakeExecutor(hand_model());
  ASSERT_NE(exec, nullptr);
  std::vector<float> short_input(kN - 1);
  Status s = exec->set_input("x", short_input);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("takes 1024 floats, got 1023"), std::string::npos) << s.message();
  s = exec->set_input("y", hand_model_input());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no input named 'y' (the inputs are 'x')"), std::string::npos)
      << s.message();
}

TEST(GraphExecutorTest, CreateErrors) {
  {
    ModelArtifact m = hand_model();
    m.steps[3].symbol = "no_such_stage";
    auto exec = GraphExecutor::create(m, 1, "hand.kiln");
    ASSERT_FALSE(exec.ok());
    EXPECT_NE(exec.status().message().find("hand.kiln: step 3 ('t4 = 2 t3')"), std::string::npos)
        << exec.status().message();
    EXPECT_NE(exec.status().message().find("'no_such_stage'"), std::string::npos);
  }
  {
    ModelArtifact m = hand_model();
    m.cpu_features = {"sse2", "avx9000"};
    auto exec = GraphExecutor::create(m, 1, "hand.kiln");
    ASSERT_FALSE(exec.ok());
    EXPECT_EQ(exec.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(exec.status().message().find("hand.kiln: needs CPU feature 'avx9000', which is "
                                           "unknown to this kiln"),
              std::string::npos)
        << exec.status().message();
  }
  {
    ModelArtifact m = hand_model();
    m.target = "llvm -mtriple=aarch64-linux-gnu";
    auto exec = GraphExecutor::create(m, 1, "hand.kiln");
    ASSERT_FALSE(exec.ok());
    EXPECT_NE(exec.status().message().find("foreign target"), std::string::npos);
  }
  {
    ModelArtifact m = hand_model();
    m.steps.pop_back();  // nothing writes `out` any more
    auto exec = GraphExecutor::create(m, 1, "hand.kiln");
    ASSERT_FALSE(exec.ok());
    EXPECT_NE(exec.status().message().find("output 'out' is not written by any step"),
              std::string::npos)
        << exec.status().message();
  }
  {
    ModelArtifact m = hand_model();
    m.shared_object = "not an ELF object";
    auto exec = GraphExecutor::create(m, 1, "hand.kiln");
    ASSERT_FALSE(exec.ok());
    EXPECT_EQ(exec.status().code(), StatusCode::kRuntime);
    EXPECT_NE(exec.status().message().find("hand.kiln: loading its shared object"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace kiln
