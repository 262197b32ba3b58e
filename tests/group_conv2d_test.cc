// group_conv2d_nchw.x86 (ops/group_conv2d.cc): TVM's grouped convolution. Its workloads (from
// ONNX Conv nodes of group neither 1 nor C = K, and from TVM's task args), its space and
// fallback (TVM's), kiln's default (fits the registers), the reference's answer for sampled
// configs including those whose blocks do not divide a group's channels (interpreter, every
// stage and the timed ones alone), LLVM code on this host, packed layouts, and a compiled model
// (RegNet's shape: a grouped 3x3 conv between 1x1 convs) against a double evaluation.
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "builder/target.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
#include "frontend/task_extraction.h"
#include "ops/conv_common.h"
#include "ops/registry.h"
#include "runner/build_and_measure.h"
#include "runtime/graph_executor.h"
#include "runtime/thread_pool.h"
#include "tests/max_error.h"
#include "tests/onnx_models.h"
#include "tests/ops_test_util.h"

namespace kiln::ops {
namespace {

const Template& group() { return group_conv2d_template(); }

const TargetInfo kAvx512{16, 32, 2, 4, 48 * 1024, 1024 * 1024};
const TargetInfo kAvx2{8, 16, 2, 3, 32 * 1024, 512 * 1024};

TEST(GroupConv2d, WorkloadsAndTheirErrors) {
  Workload w = normalized(group(), "group_conv2d:N=1,C=48,H=56,W=56,K=48,R=3,S=3,groups=6,pad=1");
  EXPECT_EQ(w.to_string(),
            "group_conv2d:C=48,H=56,K=48,N=1,R=3,S=3,W=56,dilation=1,groups=6,"
            "pad=1,stride=1");
  EXPECT_EQ(group().inputs(w)[1].shape, (std::vector<int64_t>{48, 8, 3, 3}));
  EXPECT_DOUBLE_EQ(group().flop(w), 2.0 * 48 * 56 * 56 * 8 * 9);
  for (const auto& [text, word] : std::vector<std::pair<std::string, std::string>>{
           {"group_conv2d:N=1,C=48,H=8,W=8,K=48,R=3,S=3,groups=5", "must divide"},
           {"group_conv2d:N=1,C=48,H=8,W=8,K=40,R=3,S=3,groups=16", "must divide"},
           {"group_conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,groups=8", "depthwise"},
           {"group_conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,groups=1", "groups"},
           {"group_conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3", "groups"}}) {
    std::string m = normalize_error(group(), text);
    EXPECT_NE(m.find(word), std::string::npos) << text << ": " << m;
    EXPECT_NE(m.find("group_conv2d_nchw.x86"), std::string::npos) << m;
  }
  // TVM's task args read back as the workload.
  const Operator* op = find_operator("group_conv2d");
  ASSERT_NE(op, nullptr);
  Result<Workload> back = op->from_tvm_args(group().tvm_args(w));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(normalized(group(), back->to_string()).to_string(), w.to_string());
  EXPECT_FALSE(op->from_tvm_args(nlohmann::json::parse(
                                     R"([["TENSOR",[1,48,8,8],"float32"],)"
                                     R"(["TENSOR",[48,8,3,3],"float32"],[1,1],[1,1,1,1],[1,1]])"))
                   .ok());
}

TEST(GroupConv2d, SpaceFallbackAndDefault) {
  Workload w = normalized(group(), "group_conv2d:N=1,C=48,H=56,W=56,K=48,R=3,S=3,groups=6,pad=1");
  ConfigSpace space = group().space(w);
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_ic", "tile_oc", "tile_ow", "unroll_kw"}));
  EXPECT_EQ(space.find_knob("tile_ic")->entities.size(), get_factors(48).size());
  // TVM's fallback: 8 channels a group, 16 lanes: blocks of 8; 56 columns: reg_n 28.
  ConfigEntity fb = group().fallback(w, space, kAvx512);
  EXPECT_EQ(space.get(fb.index()), fb);
  EXPECT_EQ(inner(fb, "tile_oc"), 8);
  EXPECT_EQ(inner(fb, "tile_ic"), 8);
  EXPECT_EQ(inner(fb, "tile_ow"), 28);
  for (const TargetInfo& target : {kAvx512, kAvx2}) {
    ConfigEntity d = group().default_config(w, space, target);
    EXPECT_EQ(space.get(d.index()), d);
    const int64_t vectors = (inner(d, "tile_oc") + target.simd_lanes - 1) / target.simd_lanes;
    EXPECT_LE(inner(d, "tile_ow") * vectors + vectors + 1, target.vector_registers);
    EXPECT_EQ(8 % inner(d, "tile_oc"), 0);
  }
}

// Every sampled config computes the reference, also those whose knob values do not divide a
// group's channels (TVM fails to build them; kiln uses the gcd).
TEST(GroupConv2d, SampledConfigsComputeTheReference) {
  uint64_t seed = 3;
  for (const char* text : {"group_conv2d:N=1,C=12,H=7,W=7,K=24,R=3,S=3,groups=3,pad=1",
                           "group_conv2d:N=2,C=16,H=9,W=8,K=8,R=3,S=3,groups=4,stride=2,pad=1",
                           "group_conv2d:N=1,C=32,H=6,W=6,K=32,R=1,S=1,groups=2"}) {
    Workload w = normalized(group(), text);
    ConfigSpace space = group().space(w);
    std::mt19937_64 rng(seed);
    std::vector<int64_t> indices = {group().fallback(w, space, kAvx512).index(),
                                    group().default_config(w, space, kAvx2).index()};
    for (int i = 0; i < 6; ++i) indices.push_back(static_cast<int64_t>(rng() % space.size()));
    for (int64_t index : indices) {
      ConfigEntity config = space.get(index);
      auto p = group().instantiate(w, config, kAvx512);
      ASSERT_TRUE(p.ok()) << text << " " << config.entity_string() << ": " << p.status().message();
      EXPECT_TRUE(ComputesReference(group(), w, *p, seed++))
          << text << " " << config.entity_string();
    }
  }
}

// Packed in and out, as a compiled model chains them.
TEST(GroupConv2d, PackedLayoutsComputeTheReferenceToo) {
  Workload w = normalized(group(), "group_conv2d:N=1,C=16,H=6,W=6,K=32,R=3,S=3,groups=2,pad=1");
  ConfigEntity config = group().default_config(w, group().space(w), kAvx2);
  std::optional<ActivationBlocks> blocks = group().activation_blocks(w, config);
  ASSERT_TRUE(blocks.has_value());
  auto p = group().instantiate(w, config, kAvx2, {4, true});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->buffers[0]->shape, (std::vector<int64_t>{1, 4, 6, 6, 4}));
  EXPECT_EQ(p->buffers[3]->shape, (std::vector<int64_t>{1, 32 / blocks->out, 6, 6, blocks->out}));
}

TEST(GroupConv2d, BuiltForThisHostMatchesTheReference) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  runner::MeasureOptions check;
  check.time.number = 1;
  check.time.repeat = 1;
  for (const char* text : {"group_conv2d:N=1,C=48,H=28,W=28,K=48,R=3,S=3,groups=6,pad=1",
                           "group_conv2d:N=1,C=104,H=14,W=14,K=104,R=3,S=3,groups=13,stride=2,"
                           "pad=1"}) {
    Workload w = normalized(group(), text);
    const TargetInfo info{static_cast<int>(target.simd_lanes())};
    ConfigSpace space = group().space(w);
    for (const ConfigEntity& config :
         {group().default_config(w, space, info), group().fallback(w, space, info)}) {
      MeasureResult m = runner::check_config(group(), w, config, target, check, pool);
      EXPECT_EQ(m.error, MeasureError::kNoError) << text << ": " << m.message;
      EXPECT_LE(m.relative_error, 1e-5) << text;
    }
  }
}

// x [1, 16, 8, 8] -> Conv 1x1 (K=24) -> Relu -> Conv 3x3 group 3 pad 1 (K=24) -> Relu ->
// Conv 1x1 (K=16) -> y: the grouped conv is a task of its own, compiled between packed
// neighbours; the output matches a direct double evaluation.
TEST(GroupConv2d, AModelWithAGroupedConvCompilesAndRuns) {
  testing::OnnxModel m;
  m.input("x", {1, 16, 8, 8});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto values = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  const std::vector<float> w1 = values(24 * 16), b1 = values(24), w2 = values(24 * 8 * 9),
                           b2 = values(24), w3 = values(16 * 24), b3 = values(16);
  m.floats("w1", {24, 16, 1, 1}, w1);
  m.floats("b1", {24}, b1);
  m.floats("w2", {24, 8, 3, 3}, w2);
  m.floats("b2", {24}, b2);
  m.floats("w3", {16, 24, 1, 1}, w3);
  m.floats("b3", {16}, b3);
  m.node("Conv", {"x", "w1", "b1"}, {"c1"});
  m.node("Relu", {"c1"}, {"r1"});
  onnx::NodeProto* grouped = m.node("Conv", {"r1", "w2", "b2"}, {"c2"});
  testing::OnnxModel::attr(grouped, "kernel_shape", std::vector<int64_t>{3, 3});
  testing::OnnxModel::attr(grouped, "pads", std::vector<int64_t>{1, 1, 1, 1});
  testing::OnnxModel::attr(grouped, "group", int64_t{3});
  m.node("Relu", {"c2"}, {"r2"});
  m.node("Conv", {"r2", "w3", "b3"}, {"y"});
  m.output("y");
  const std::string model = m.write("grouped_three_convs");

  Result<frontend::Graph> graph = frontend::import_onnx(model);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  frontend::TaskExtraction tasks = frontend::extract_tasks(*graph);
  EXPECT_TRUE(tasks.not_tunable.empty()) << tasks.not_tunable[0];
  ASSERT_EQ(tasks.tasks.size(), 3u);
  EXPECT_EQ(tasks.tasks[1].tmpl, &group());
  EXPECT_EQ(tasks.tasks[1].workload.to_string(),
            "group_conv2d:C=24,H=8,K=24,N=1,R=3,S=3,W=8,dilation=1,groups=3,pad=1,stride=1");

  compiler::CompileReport report;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, {}, &report);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  std::vector<float> x(16 * 64);
  for (float& v : x) v = dist(rng);
  Result<std::unique_ptr<GraphExecutor>> exec = GraphExecutor::create(*artifact, 2, "grouped");
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  ASSERT_TRUE((*exec)->set_input("x", x).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);

  std::vector<double> r1(24 * 64), r2(24 * 64);
  for (int k = 0; k < 24; ++k) {
    for (int i = 0; i < 64; ++i) {
      double acc = b1[k];
      for (int c = 0; c < 16; ++c) acc += double(w1[k * 16 + c]) * x[c * 64 + i];
      r1[k * 64 + i] = std::max(acc, 0.0);
    }
  }
  for (int k = 0; k < 24; ++k) {
    const int group0 = k / 8 * 8;
    for (int p = 0; p < 8; ++p) {
      for (int q = 0; q < 8; ++q) {
        double acc = b2[k];
        for (int c = 0; c < 8; ++c) {
          for (int r = 0; r < 3; ++r) {
            for (int s = 0; s < 3; ++s) {
              int h = p + r - 1, v = q + s - 1;
              if (h < 0 || h >= 8 || v < 0 || v >= 8) continue;
              acc += double(w2[((k * 8 + c) * 3 + r) * 3 + s]) * r1[(group0 + c) * 64 + h * 8 + v];
            }
          }
        }
        r2[k * 64 + p * 8 + q] = std::max(acc, 0.0);
      }
    }
  }
  ASSERT_EQ(y.size(), 16u * 64);
  double err = 0, scale = 0;
  for (int k = 0; k < 16; ++k) {
    for (int i = 0; i < 64; ++i) {
      double acc = b3[k];
      for (int c = 0; c < 24; ++c) acc += double(w3[k * 24 + c]) * r2[c * 64 + i];
      err = testing::max_error(err, std::abs(acc - y[k * 64 + i]));
      scale = std::max(scale, std::abs(acc));
    }
  }
  EXPECT_LE(err / scale, 1e-5);
}

}  // namespace
}  // namespace kiln::ops
