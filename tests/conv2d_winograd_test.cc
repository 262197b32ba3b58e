// conv2d_NCHWc_winograd.x86 (ops/conv2d_winograd.cc): its workloads (3x3 stride-1 convolutions,
// normalized as conv2d_NCHWc.x86 normalizes them), its config space and fallback, its place among
// conv2d's templates (an extra template: not a TVM task), the reference's answer for sampled
// configs (interpreter; the layouts are in conv_layout_test), its measured program (packed in,
// packed out, the weight transform untimed), the numerical error of F(4x4, 3x3) on ResNet-18's
// 3x3 layers as LLVM code, and the compiler's choice between it and the direct convolution.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "builder/target.h"
#include "compiler/compile_model.h"
#include "compiler/layout_candidates.h"
#include "compiler/stage_access.h"
#include "frontend/onnx_import.h"
#include "frontend/task_extraction.h"
#include "ops/measured_layout.h"
#include "ops/registry.h"
#include "runner/build_and_measure.h"
#include "runner/local_measure.h"
#include "runtime/graph_executor.h"
#include "runtime/thread_pool.h"
#include "store/open_store.h"
#include "tests/max_error.h"
#include "tests/onnx_models.h"
#include "tests/ops_test_util.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"
#include "tuner/space_walk.h"

namespace kiln::ops {
namespace {

const TargetInfo kAvx512{16};

const Template& winograd() { return conv2d_winograd_template(); }
const Template& direct() { return conv2d_nchwc_template(); }

// ---------------------------------------------------------------------------------------------
// Workloads, space, registry.

TEST(Conv2dWinograd, NormalizesAsTheDirectTemplateAndRejectsWithReasons) {
  for (const char* text : {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1",
                           "conv2d:N=2,C=5,H=9,W=7,K=3,R=3,S=3,pad_h=0,pad_w=2"}) {
    EXPECT_EQ(normalized(winograd(), text).to_string(), normalized(direct(), text).to_string());
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"conv2d:N=1,C=8,H=9,W=9,K=8,R=1,S=1", "3x3"},
      {"conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=5", "3x3"},
      {"conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,stride=2", "stride"},
      {"conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,stride_w=2", "stride"},
      {"conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,dilation=2", "dilation"},
      {"conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,groups=2", "groups"},
      {"conv2d:N=1,C=8,H=9,W=9,R=3,S=3", "K"}};
  for (const auto& [text, word] : bad) {
    std::string m = normalize_error(winograd(), text);
    EXPECT_NE(m.find(word), std::string::npos) << text << ": " << m;
    EXPECT_NE(m.find("conv2d_NCHWc_winograd.x86"), std::string::npos) << m;
  }
}

TEST(Conv2dWinograd, IsAnExtraConv2dTemplateAfterTheDirectOne) {
  EXPECT_TRUE(winograd().extra());
  EXPECT_FALSE(direct().extra());
  std::vector<const Template*> conv = templates_for_op("conv2d");
  ASSERT_EQ(conv.size(), 4u);
  EXPECT_EQ(conv[0], &direct());
  EXPECT_EQ(conv[1], &winograd());
  EXPECT_EQ(conv[2], &conv2d_ragged_template());
  EXPECT_EQ(conv[3], &conv2d_flat_template());
  EXPECT_EQ(find_template("conv2d_NCHWc_winograd.x86"), &winograd());
  // A workload without --template gets TVM's templates only; naming it gets the Winograd one.
  Workload w = *Workload::parse("conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,pad=1");
  EXPECT_EQ(*resolve_templates(w, ""), std::vector<const Template*>{&direct()});
  EXPECT_EQ(*resolve_templates(w, "conv2d_NCHWc_winograd.x86"),
            std::vector<const Template*>{&winograd()});
  Workload same = normalized(winograd(), "conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,pad=1");
  EXPECT_EQ(winograd().flop(same), direct().flop(same));  // effective GFLOPS compare
  EXPECT_EQ(winograd().tvm_args(same), direct().tvm_args(same));
}

// Untuned, a 3x3 stride-1 conv takes Winograd where its GEMM and its 4x larger transformed
// weights (streamed once per run) model faster than the direct conv at the target's FMA peak:
// ResNet-18's 64-256 channel layers on 16 and 8 lanes; 512 channels at 7x7 only on 8 lanes (at 16
// the weights' stream outweighs the GEMM's saving); never for 3 input channels or 8 output ones.
TEST(Conv2dWinograd, UntunedWhereItModelsFasterThanTheDirectConv) {
  const TargetInfo avx512{16, 32, 2, 4, 48 * 1024, 1024 * 1024};
  const TargetInfo avx2{8, 16, 2, 3, 32 * 1024, 512 * 1024};
  const std::vector<const Template*> convs = templates_for_op("conv2d");
  auto untuned = [&](const std::string& text, const TargetInfo& target) {
    return compiler::fallback_template(convs, *Workload::parse(text), target);
  };
  for (const TargetInfo& target : {avx512, avx2}) {
    for (const char* text : {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1",
                             "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
                             "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,pad=1",
                             "conv2d:N=1,C=128,H=28,W=28,K=32,R=3,S=3,pad=1"}) {
      EXPECT_EQ(untuned(text, target), &winograd()) << text << " on " << target.simd_lanes;
    }
    for (const char* text : {"conv2d:N=1,C=3,H=224,W=224,K=64,R=3,S=3,pad=1",
                             "conv2d:N=1,C=64,H=56,W=56,K=8,R=3,S=3,pad=1",
                             "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,stride=2",
                             "conv2d:N=1,C=64,H=56,W=56,K=64,R=5,S=5,pad=2"}) {
      EXPECT_EQ(untuned(text, target), &direct()) << text << " on " << target.simd_lanes;
    }
  }
  const std::string deep = "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1";
  EXPECT_EQ(untuned(deep, avx512), &direct());
  EXPECT_EQ(untuned(deep, avx2), &winograd());
}

// kiln's default takes conv2d_NCHWc.x86's default blocks (so that an untuned Winograd conv chains
// with its direct neighbours) and GEMM rows whose register tile fits the target's registers; it
// computes the reference.
TEST(Conv2dWinograd, DefaultChainsWithTheDirectDefaultAndFitsTheRegisters) {
  uint64_t seed = 40;
  for (const TargetInfo& target : {kTestAvx512, kTestAvx2, kTestNeon}) {
    for (const char* text : {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1",
                             "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,pad=1",
                             "conv2d:N=1,C=128,H=28,W=28,K=32,R=3,S=3,pad=1"}) {
      Workload w = normalized(winograd(), text);
      ConfigSpace space = winograd().space(w);
      ConfigEntity d = winograd().default_config(w, space, target);
      EXPECT_EQ(space.get(d.index()), d) << text;
      ConfigEntity dd = direct().default_config(w, direct().space(w), target);
      EXPECT_EQ(inner(d, "tile_ic"), inner(dd, "tile_ic")) << text;
      EXPECT_EQ(inner(d, "tile_oc"), inner(dd, "tile_oc")) << text;
      const int64_t vecs = (inner(d, "tile_oc") + target.simd_lanes - 1) / target.simd_lanes;
      EXPECT_LE(inner(d, "tile_t") * vecs + vecs + 1, target.vector_registers)
          << text << " on " << target.simd_lanes << " lanes";
      // At least as many FMA chains as the latency needs on each unit.
      EXPECT_GE(inner(d, "tile_t") * vecs, int64_t{target.fma_latency} * target.fma_units)
          << text << " on " << target.simd_lanes << " lanes";
    }
  }
  Workload small = normalized(winograd(), "conv2d:N=1,C=32,H=9,W=10,K=32,R=3,S=3,pad=1");
  for (const TargetInfo& target : {kTestAvx512, kTestAvx2}) {
    ConfigEntity d = winograd().default_config(small, winograd().space(small), target);
    auto p = winograd().instantiate(small, d, target);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(ComputesReference(winograd(), small, *p, seed++)) << d.entity_string();
  }
}

TEST(Conv2dWinograd, SpaceKnobsAndFallback) {
  // 56x56 output: 14 x 14 = 196 tiles of 4x4.
  Workload w = normalized(winograd(), "conv2d:N=1,C=64,H=56,W=56,K=96,R=3,S=3,pad=1");
  ConfigSpace space = winograd().space(w);
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_ic", "tile_oc", "tile_t", "tile_k"}));
  std::set<int64_t> rows, unroll;
  for (const Entity& e : space.find_knob("tile_t")->entities) {
    rows.insert(std::get<SplitEntity>(e).size.back());
  }
  for (const Entity& e : space.find_knob("tile_k")->entities) {
    unroll.insert(std::get<SplitEntity>(e).size.back());
  }
  // Divisors of 196 and powers of two, up to 32 rows; divisors of C up to 16 steps.
  EXPECT_EQ(rows, (std::set<int64_t>{1, 2, 4, 7, 8, 14, 16, 28, 32}));
  EXPECT_EQ(unroll, (std::set<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(space.find_knob("tile_oc")->entities.size(), get_factors(96).size());

  ConfigEntity fb = winograd().fallback(w, space, kAvx512);
  EXPECT_EQ(space.get(fb.index()), fb);
  EXPECT_EQ(inner(fb, "tile_oc"), 16);
  EXPECT_EQ(inner(fb, "tile_ic"), 16);
  EXPECT_EQ(inner(fb, "tile_t"), 8);
  EXPECT_EQ(inner(fb, "tile_k"), 4);
  ConfigEntity avx2 = winograd().fallback(w, space, TargetInfo{8});
  EXPECT_EQ(inner(avx2, "tile_oc"), 8);
  EXPECT_EQ(inner(avx2, "tile_ic"), 8);
  // Few tiles and odd channels: every knob still has a value in the space.
  Workload tiny = normalized(winograd(), "conv2d:N=1,C=3,H=3,W=3,K=5,R=3,S=3,pad=1");
  ConfigSpace tiny_space = winograd().space(tiny);
  ConfigEntity tiny_fb = winograd().fallback(tiny, tiny_space, kAvx512);
  EXPECT_EQ(tiny_space.get(tiny_fb.index()), tiny_fb);
  EXPECT_EQ(inner(tiny_fb, "tile_t"), 1);
  EXPECT_EQ(inner(tiny_fb, "tile_oc"), 5);
}

TEST(Conv2dWinograd, ConfigsWithoutItsKnobsAreInstantiationErrors) {
  Workload w = normalized(winograd(), "conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3,pad=1");
  ConfigEntity direct_config = direct().fallback(w, direct().space(w), kAvx512);
  Result<ir::Program> p = winograd().instantiate(w, direct_config, kAvx512);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInstantiation);
  EXPECT_NE(p.status().message().find("tile_t"), std::string::npos) << p.status().message();
}

// ---------------------------------------------------------------------------------------------
// Correctness in the interpreter: the fallback and sampled configs (row tiles with a tail,
// channel blocks that are not 16) for partial tiles, padding 0 and 1, batch 2.

class Conv2dWinogradConfigs : public ::testing::TestWithParam<std::string> {};

TEST_P(Conv2dWinogradConfigs, SampledConfigsMatchTheReference) {
  Workload w = normalized(winograd(), GetParam());
  ConfigSpace space = winograd().space(w);
  std::mt19937_64 rng(17);
  std::vector<int64_t> indices = tuner::sample_ints(space, 6, rng);
  indices.push_back(winograd().fallback(w, space, kAvx512).index());
  for (int64_t index : indices) {
    ConfigEntity config = space.get(index);
    SCOPED_TRACE(config.entity_string());
    Result<ir::Program> p = winograd().instantiate(w, config, kAvx512);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(ComputesReference(winograd(), w, *p, 3 + index));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dWinogradConfigs,
                         ::testing::Values("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1",
                                           "conv2d:N=1,C=7,H=9,W=11,K=5,R=3,S=3,pad=1",
                                           "conv2d:N=2,C=12,H=10,W=7,K=20,R=3,S=3",
                                           "conv2d:N=1,C=3,H=3,W=3,K=4,R=3,S=3,pad=1",
                                           "conv2d:N=1,C=10,H=6,W=14,K=6,R=3,S=3,pad_h=2,pad_w=0"));

// ---------------------------------------------------------------------------------------------
// The measured program.

std::vector<std::string> buffer_names(const ir::Program& p, const std::vector<int>& indices) {
  std::vector<std::string> out;
  for (int i : indices) out.push_back(p.buffers[i]->name);
  std::sort(out.begin(), out.end());
  return out;
}

// As AutoTVM measures a conv: data packed to NCHW{tile_ic}c and the output left NCHW{tile_oc}c;
// the untimed stages are the padding copy and the weight transform, which reads only the weight
// (so a compiled model evaluates it once); the timed stages never touch the NCHW data or the
// weight.
TEST(Conv2dWinograd, MeasuredPackedInPackedOutWithTheKernelPreTransformed) {
  Workload w = normalized(winograd(), "conv2d:N=1,C=24,H=10,W=9,K=32,R=3,S=3,pad=1");
  ConfigSpace space = winograd().space(w);
  EXPECT_EQ(oldest_comparable_version(winograd().name()), 2);
  std::mt19937_64 rng(5);
  std::vector<int64_t> indices = tuner::sample_ints(space, 4, rng);
  indices.push_back(winograd().fallback(w, space, kAvx512).index());
  for (int64_t index : indices) {
    ConfigEntity config = space.get(index);
    SCOPED_TRACE(config.entity_string());
    const int64_t ic_bn = inner(config, "tile_ic"), oc_bn = inner(config, "tile_oc");
    ActivationLayout layout = measured_layout(winograd(), config);
    EXPECT_EQ(layout.data_block, ic_bn);
    EXPECT_TRUE(layout.packed_output);
    Result<ir::Program> p = instantiate_measured(winograd(), w, config, kAvx512);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->buffers[0]->shape, (std::vector<int64_t>{1, 24 / ic_bn, 10, 9, ic_bn}));
    EXPECT_EQ(p->buffers[p->num_inputs]->shape,
              (std::vector<int64_t>{1, 32 / oc_bn, 10, 9, oc_bn}));
    int timed = 0;
    for (const ir::Stage& s : p->stages) {
      compiler::StageAccess a = compiler::stage_access(*p, s);
      std::vector<std::string> reads = buffer_names(*p, a.reads),
                               writes = buffer_names(*p, a.writes);
      if (!s.timed) {
        EXPECT_TRUE((reads == std::vector<std::string>{"data"} &&
                     writes == std::vector<std::string>{"data_vec"}) ||
                    (reads == std::vector<std::string>{"weight"} &&
                     writes == std::vector<std::string>{"kernel_winograd"}))
            << s.name;
        continue;
      }
      ++timed;
      for (const std::string& r : reads) EXPECT_TRUE(r != "data" && r != "weight") << s.name;
    }
    EXPECT_EQ(timed, 3);
  }
}

// ---------------------------------------------------------------------------------------------
// As LLVM code, checked by the runner against the double-precision reference: ResNet-18's 3x3
// stride-1 layers stay well within the 1e-4 the model's output must meet (F(4x4, 3x3)'s error
// grows with the channels summed).

TEST(Conv2dWinograd, ResNet18LayersAreWithinTheModelTolerance) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  runner::MeasureOptions check;
  check.time.number = 1;
  check.time.repeat = 1;
  for (const char* text : {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1",
                           "conv2d:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
                           "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,pad=1",
                           "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,pad=1"}) {
    Workload w = normalized(winograd(), text);
    ConfigEntity config = winograd().fallback(w, winograd().space(w), {target.simd_lanes()});
    MeasureResult m = runner::check_config(winograd(), w, config, target, check, pool);
    EXPECT_EQ(m.error, MeasureError::kNoError) << text << ": " << m.message;
    EXPECT_LE(m.relative_error, 2e-5) << text;
  }
}

// A 512-channel block needs 72 KiB of transform buffer, over the stack cap: the data transform
// runs over channel runs that fit, so the config builds and computes the reference's answer
// (ResNet-18's tuning recorded such configs as COMPILE_HOST failures).
TEST(Conv2dWinograd, ChannelBlocksOverTheStackCapBuildAndMatchTheReference) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  runner::MeasureOptions check;
  check.time.number = 1;
  check.time.repeat = 1;
  Workload w = normalized(winograd(), "conv2d:N=1,C=512,H=6,W=6,K=16,R=3,S=3,pad=1");
  ConfigSpace space = winograd().space(w);
  ConfigEntity fallback = winograd().fallback(w, space, {target.simd_lanes()});
  nlohmann::json entities = fallback.to_json()["entity"];
  for (nlohmann::json& knob : entities) {
    if (knob[0] == "tile_ic") knob[2] = nlohmann::json::array({-1, 512});
  }
  Result<ConfigEntity> config = space.from_json_entities(entities);
  ASSERT_TRUE(config.ok()) << config.status().message();
  MeasureResult m = runner::check_config(winograd(), w, *config, target, check, pool);
  EXPECT_EQ(m.error, MeasureError::kNoError) << m.message;
  EXPECT_LE(m.relative_error, 2e-5);
}

// ---------------------------------------------------------------------------------------------
// The compiler's choice.

// x [1, 8, 10, 10] -> Conv 3x3 pad 1 (K=16) -> Relu -> Conv 3x3 pad 1 (K=8) -> y, with
// deterministic pseudo-random weights and biases.
std::string two_conv_model() {
  testing::OnnxModel m;
  m.input("x", {1, 8, 10, 10});
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto values = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  m.floats("w1", {16, 8, 3, 3}, values(16 * 8 * 9));
  m.floats("b1", {16}, values(16));
  m.floats("w2", {8, 16, 3, 3}, values(8 * 16 * 9));
  m.floats("b2", {8}, values(8));
  for (auto [in, w, b, out] : {std::array<const char*, 4>{"x", "w1", "b1", "c1"},
                               std::array<const char*, 4>{"r1", "w2", "b2", "y"}}) {
    onnx::NodeProto* conv = m.node("Conv", {in, w, b}, {out});
    testing::OnnxModel::attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
    testing::OnnxModel::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    if (std::string(out) == "c1") m.node("Relu", {"c1"}, {"r1"});
  }
  m.output("y");
  return m.write("winograd_two_convs");
}

struct Compiled {
  compiler::CompileReport report;
  std::vector<float> output;
};

Compiled compile_and_run(const std::string& model, store::Store* db) {
  Compiled out;
  Result<frontend::Graph> graph = frontend::import_onnx(model);
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  if (!graph.ok()) return out;
  compiler::CompileOptions options;
  options.store = db;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, options, &out.report);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return out;
  Result<std::unique_ptr<GraphExecutor>> exec = GraphExecutor::create(*artifact, 2, "test");
  EXPECT_TRUE(exec.ok()) << exec.status().message();
  if (!exec.ok()) return out;
  std::vector<float> input(8 * 10 * 10);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<float>((i * 37 % 101) / 50.0 - 1);
  EXPECT_TRUE((*exec)->set_input("x", input).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);
  out.output.assign(y.begin(), y.end());
  return out;
}

double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    err = testing::max_error(err, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return err / std::max(scale, 1e-30);
}

// The templates the report's convs run with, for `workloads` in their order (the report lists
// its tasks by template and workload, not in graph order).
std::vector<std::string> chosen(const compiler::CompileReport& r,
                                const std::vector<std::string>& workloads) {
  std::vector<std::string> out;
  for (const std::string& text : workloads) {
    std::string name = "(none)";
    for (const compiler::CompiledTask& t : r.tasks) {
      if (t.workload == normalized(direct(), text).to_string()) name = t.template_name;
    }
    out.push_back(name);
  }
  return out;
}

store::Record record_of(const Template& t, const std::string& workload, double cost) {
  Workload w = normalized(t, workload);
  ConfigSpace space = t.space(w);
  ConfigEntity config = t.fallback(w, space, {builder::host_target().simd_lanes()});
  store::Record r;
  r.target = builder::host_target().to_string();
  r.task_name = std::string(t.name());
  r.workload = w.to_string();
  r.config_index = config.index();
  r.entities = config.to_json()["entity"];
  r.costs = {cost};
  r.timestamp = 1700000000;
  r.flop = t.flop(w);
  r.source = "test";
  r.measure_version = kMeasureVersion;
  return r;
}

// Untuned: the direct fallback. A Winograd record alone does not count (nothing measured the
// direct conv). With both, the faster record's template; the output is the same either way.
TEST(Conv2dWinograd, CompileUsesItOnlyWhereItsRecordBeatsTheDirectOne) {
  const std::string model = two_conv_model();
  const std::string conv1 = "conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1";
  const std::string conv2 = "conv2d:N=1,C=16,H=10,W=10,K=8,R=3,S=3,pad=1";
  Compiled untuned = compile_and_run(model, nullptr);
  EXPECT_EQ(chosen(untuned.report, {conv1, conv2}),
            (std::vector<std::string>{"conv2d_NCHWc.x86", "conv2d_NCHWc.x86"}));

  testing::TempDir dir("kiln-winograd");
  const std::string db_path = dir.file("choice.db");
  auto db = store::open_store(db_path);
  ASSERT_TRUE(db.ok()) << db.status().message();
  // Only Winograd records: still the direct fallbacks.
  ASSERT_TRUE(
      (*db)->append({record_of(winograd(), conv1, 1e-6), record_of(winograd(), conv2, 1e-6)}).ok());
  Compiled only_winograd = compile_and_run(model, db->get());
  EXPECT_EQ(chosen(only_winograd.report, {conv1, conv2}),
            (std::vector<std::string>{"conv2d_NCHWc.x86", "conv2d_NCHWc.x86"}));
  for (const compiler::CompiledTask& t : only_winograd.report.tasks) EXPECT_FALSE(t.tuned);

  // Direct records: faster than Winograd for conv1, slower for conv2.
  ASSERT_TRUE(
      (*db)->append({record_of(direct(), conv1, 1e-7), record_of(direct(), conv2, 1e-5)}).ok());
  Compiled mixed = compile_and_run(model, db->get());
  EXPECT_EQ(chosen(mixed.report, {conv1, conv2}),
            (std::vector<std::string>{"conv2d_NCHWc.x86", "conv2d_NCHWc_winograd.x86"}));
  EXPECT_LE(max_relative_error(mixed.output, untuned.output), 1e-5);
}

std::vector<float> read_floats(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<float> data(std::filesystem::file_size(path) / sizeof(float));
  f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return data;
}

// ResNet-18 with every 3x3 stride-1 conv on Winograd (its records beat the direct ones): the
// output still matches the reference output to 1e-4, the bound for a compiled model.
TEST(Conv2dWinograd, ResNet18OnWinogradMatchesTheReferenceOutput) {
  const std::string dir = std::string(KILN_SHARED_DIR) + "/models/resnet18/";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir;
  Result<frontend::Graph> graph = frontend::import_onnx(dir + "resnet18.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  frontend::TaskExtraction extraction = frontend::extract_tasks(*graph);
  std::vector<frontend::ModelTask> extra = frontend::extra_tasks(extraction.tasks);
  // Winograd's, not the flat template's (the 1x1 downsampling convs).
  std::erase_if(extra, [](const frontend::ModelTask& t) { return t.tmpl != &winograd(); });
  ASSERT_EQ(extra.size(), 4u);  // 64x56x56, 128x28x28, 256x14x14, 512x7x7
  std::vector<store::Record> records;
  for (const frontend::ModelTask& t : extra) {
    records.push_back(record_of(direct(), t.workload.to_string(), 1e-3));
    records.push_back(record_of(winograd(), t.workload.to_string(), 1e-4));
  }
  testing::TempDir tmp("kiln-winograd");
  auto db = store::open_store(tmp.file("resnet.db"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_TRUE((*db)->append(records).ok());

  compiler::CompileOptions options;
  options.store = db->get();
  compiler::CompileReport report;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, options, &report);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  int on_winograd = 0;
  for (const compiler::CompiledTask& t : report.tasks) {
    on_winograd += t.template_name == "conv2d_NCHWc_winograd.x86" ? t.count : 0;
  }
  EXPECT_EQ(on_winograd, 13);  // 4 + 3 + 3 + 3: all but the stride-2 first conv of stages 2-4
  Result<std::unique_ptr<GraphExecutor>> exec = GraphExecutor::create(*artifact, 2, "resnet18");
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  ASSERT_TRUE((*exec)->set_input((*exec)->input_info(0).name, read_floats(dir + "input.bin")).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);
  std::vector<float> got(y.begin(), y.end());
  EXPECT_LE(max_relative_error(got, read_floats(dir + "output.bin")), 1e-4);
}

// End to end: `kiln tune MODEL` tunes the Winograd tasks next to TVM's (not with --no-winograd),
// `kiln tasks` still lists TVM's alone, and the compile takes, per conv, the template whose
// best record is faster (unless the layout plan saves a block conversion by taking the other),
// with the untuned model's output.
TEST(Conv2dWinograd, TuneModelThenCompilePicksTheFasterTemplate) {
  const std::string model = two_conv_model();
  testing::TempDir dir("kiln-winograd");
  const std::string db_path = dir.file("tuned.db");
  const std::string common = " --tuner random --number 1 --repeat 3 --cooldown-interval 0 --seed 3";
  testing::CommandResult tasks = testing::run_kiln("tasks " + model);
  EXPECT_EQ(tasks.exit_code, 0) << tasks.output;
  EXPECT_EQ(tasks.output.find("conv2d_NCHWc_winograd"), std::string::npos) << tasks.output;

  const std::string plain_db = dir.file("plain.db");
  testing::CommandResult plain = testing::run_kiln("tune " + model + " --db " + plain_db +
                                                   " --trials-per-task 2 --no-winograd" + common);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("conv2d_NCHWc_winograd"), std::string::npos) << plain.output;

  testing::CommandResult tuned =
      testing::run_kiln("tune " + model + " --db " + db_path + " --trials-per-task 6" + common);
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  EXPECT_NE(tuned.output.find("4 tasks"), std::string::npos) << tuned.output;

  auto db = store::open_store(db_path, /*read_only=*/true);
  ASSERT_TRUE(db.ok()) << db.status().message();
  const std::string target = builder::host_target().to_string();
  const std::vector<std::string> convs = {"conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,pad=1",
                                          "conv2d:N=1,C=16,H=10,W=10,K=8,R=3,S=3,pad=1"};
  std::vector<std::string> faster;
  std::vector<nlohmann::json> faster_entities;
  std::string costs;
  for (const std::string& text : convs) {
    Workload w = normalized(direct(), text);
    auto d = (*db)->best(target, "conv2d_NCHWc.x86", w.to_string());
    auto g = (*db)->best(target, "conv2d_NCHWc_winograd.x86", w.to_string());
    ASSERT_TRUE(d.ok() && g.ok() && d->has_value() && g->has_value()) << text;
    const bool winograd = (*g)->mean_cost() < (*d)->mean_cost();
    faster.push_back(winograd ? "conv2d_NCHWc_winograd.x86" : "conv2d_NCHWc.x86");
    faster_entities.push_back(winograd ? (*g)->entities : (*d)->entities);
    costs += text + ": direct " + std::to_string((*d)->mean_cost()) + " s " +
             (*d)->entities.dump() + ", winograd " + std::to_string((*g)->mean_cost()) + " s " +
             (*g)->entities.dump() + "\n";
  }
  Compiled compiled = compile_and_run(model, db->get());
  if (chosen(compiled.report, convs) != faster) {
    // The layout plan gives up a faster kernel only to save a block conversion between the two
    // convs: the faster ones' blocks differ there (the first's tile_oc, the second's tile_ic),
    // and the plan keeps none.
    auto block = [](const nlohmann::json& entities, const std::string& knob) {
      for (const nlohmann::json& e : entities) {
        if (e[0] == knob) return e[2].back().get<int64_t>();
      }
      return int64_t{0};
    };
    EXPECT_NE(block(faster_entities[0], "tile_oc"), block(faster_entities[1], "tile_ic")) << costs;
    EXPECT_EQ(compiled.report.plan_transforms, 0) << costs;
  }
  for (const compiler::CompiledTask& t : compiled.report.tasks) EXPECT_TRUE(t.tuned);
  EXPECT_LE(max_relative_error(compiled.output, compile_and_run(model, nullptr).output), 1e-5);
}

}  // namespace
}  // namespace kiln::ops
