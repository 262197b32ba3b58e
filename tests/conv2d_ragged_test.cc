// conv2d_NCHWc_ragged.x86 (ops/conv2d_ragged.cc): output-channel blocks of whole vectors that
// need not divide K. Its workloads and place among conv2d's templates, its space and untuned
// configs (never more accumulators than the target's registers), the reference's answer for
// ragged blocks over 1000, 24 and 1001 channels (interpreter, every stage and the timed ones
// alone), the same as LLVM code on this host, the layouts a ragged block takes (NCHW out only),
// and a compiled model whose ragged conv (a prime channel count) feeds another conv.
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "builder/target.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
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

const Template& ragged() { return conv2d_ragged_template(); }
const Template& direct() { return conv2d_nchwc_template(); }

const TargetInfo kAvx512{16, 32, 2, 4, 48 * 1024, 1024 * 1024};
const TargetInfo kAvx2{8, 16, 2, 3, 32 * 1024, 512 * 1024};
const TargetInfo kNeon{4, 32, 2, 4, 64 * 1024, 1024 * 1024};

// The first config of `w`'s space with these blocks, reg_n (tile_ow[-1]) and tile_oh or
// unroll_kw value.
ConfigEntity with(const Workload& w, int64_t ic_bn, int64_t oc_bn, int64_t reg_n,
                  const nlohmann::json& last) {
  ConfigSpace space = ragged().space(w);
  for (int64_t i = 0; i < space.size(); ++i) {
    ConfigEntity c = space.get(i);
    const char* last_knob = c.find("tile_oh") ? "tile_oh" : "unroll_kw";
    if (inner(c, "tile_ic") == ic_bn && c.other("oc_bn").val == oc_bn &&
        inner(c, "tile_ow") == reg_n && c.other(last_knob).val == last) {
      return c;
    }
  }
  ADD_FAILURE() << "no config of " << w.to_string() << " with ic_bn " << ic_bn << ", oc_bn "
                << oc_bn << ", reg_n " << reg_n << ", " << last.dump();
  return space.get(0);
}

TEST(Conv2dRagged, AppliesWhereKIsOffTheWidestVectorAndNormalizesAsTheDirectTemplate) {
  for (const char* text :
       {"conv2d:N=1,C=512,H=7,W=7,K=1000,R=1,S=1", "conv2d:N=1,C=16,H=9,W=9,K=24,R=3,S=3,pad=1",
        "conv2d:N=2,C=7,H=5,W=6,K=1001,R=3,S=3,stride=2,pad_w=1"}) {
    EXPECT_EQ(normalized(ragged(), text).to_string(), normalized(direct(), text).to_string());
  }
  for (const auto& [text, word] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d:N=1,C=8,H=9,W=9,K=64,R=3,S=3", "K=64"},
           {"conv2d:N=1,C=8,H=9,W=9,K=8,R=3,S=3", "K=8"},
           {"conv2d:N=1,C=8,H=9,W=9,K=40,R=3,S=3,groups=2", "groups"}}) {
    std::string m = normalize_error(ragged(), text);
    EXPECT_NE(m.find(word), std::string::npos) << text << ": " << m;
    EXPECT_NE(m.find("conv2d_NCHWc_ragged.x86"), std::string::npos) << m;
  }
  EXPECT_TRUE(ragged().extra());
  EXPECT_EQ(find_template("conv2d_NCHWc_ragged.x86"), &ragged());
  Workload w = *Workload::parse("conv2d:N=1,C=8,H=9,W=9,K=40,R=3,S=3,pad=1");
  EXPECT_EQ(*resolve_templates(w, ""), std::vector<const Template*>{&direct()});
  Workload same = normalized(ragged(), w.to_string());
  EXPECT_EQ(ragged().flop(same), direct().flop(same));
  EXPECT_EQ(ragged().tvm_args(same), direct().tvm_args(same));
}

TEST(Conv2dRagged, SpaceBlocksOfWholeVectorsAndUntunedConfigsThatFitTheRegisters) {
  Workload w = normalized(ragged(), "conv2d:N=1,C=512,H=7,W=7,K=1000,R=1,S=1");
  ConfigSpace space = ragged().space(w);
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_ic", "oc_bn", "tile_ow", "tile_oh"}));
  std::vector<int64_t> blocks;
  for (const Entity& e : space.find_knob("oc_bn")->entities) {
    blocks.push_back(std::get<OtherOptionEntity>(e).val.get<int64_t>());
  }
  EXPECT_EQ(blocks, (std::vector<int64_t>{4, 8, 12, 16, 24, 32, 48, 64}));
  Workload small = normalized(ragged(), "conv2d:N=1,C=16,H=9,W=9,K=24,R=3,S=3,pad=1");
  EXPECT_EQ(ragged().space(small).find_knob("oc_bn")->entities.size(), 5u);  // up to 24

  for (const TargetInfo& target : {kAvx512, kAvx2, kNeon}) {
    for (const Workload& wl : {w, small}) {
      ConfigSpace s = ragged().space(wl);
      for (const ConfigEntity& c :
           {ragged().default_config(wl, s, target), ragged().fallback(wl, s, target)}) {
        EXPECT_EQ(s.get(c.index()), c) << wl.to_string();
      }
      ConfigEntity d = ragged().default_config(wl, s, target);
      const int64_t oc_bn = d.other("oc_bn").val.get<int64_t>();
      EXPECT_EQ(oc_bn % target.simd_lanes, 0) << "whole vectors: " << oc_bn;
      int64_t oh_factor = d.find("tile_oh") ? d.other("tile_oh").val.get<int64_t>() : 1;
      int64_t accumulators = oh_factor * inner(d, "tile_ow") * (oc_bn / target.simd_lanes);
      EXPECT_LE(accumulators + oc_bn / target.simd_lanes + 1, target.vector_registers)
          << wl.to_string() << " on " << target.simd_lanes << " lanes";
    }
  }
  // 1000 channels on 16 lanes: a ragged 16- or 32-lane block; the direct template's default
  // takes 25 lanes (two vectors, 78 % used; TVM's largest divisor of one vector is 10), close
  // enough that the ragged block's NCHW output is not worth it untuned. A prime count has only
  // one-lane blocks dividing it.
  ConfigEntity d = ragged().default_config(w, space, kAvx512);
  EXPECT_GE(d.other("oc_bn").val.get<int64_t>(), 16);
  EXPECT_EQ(inner(direct().default_config(w, direct().space(w), kAvx512), "tile_oc"), 25);
  EXPECT_FALSE(ragged().preferred_untuned(w, kAvx512));
  EXPECT_FALSE(ragged().preferred_untuned(w, kAvx2));  // 8 lanes divide 1000
  Workload prime = normalized(ragged(), "conv2d:N=1,C=512,H=7,W=7,K=997,R=1,S=1");
  EXPECT_TRUE(ragged().preferred_untuned(prime, kAvx512));
  EXPECT_TRUE(ragged().preferred_untuned(prime, kAvx2));
  EXPECT_FALSE(ragged().preferred_untuned(small, kAvx512));
}

// The interpreter computes the reference, with all stages and with the timed ones alone, for
// ragged blocks of every width over 1000, 24 and 1001 channels (1x1 and 3x3, strides, tail
// tiles), and for a block that divides K.
TEST(Conv2dRagged, RaggedBlocksComputeTheReference) {
  struct Case {
    const char* workload;
    int64_t ic_bn, oc_bn, reg_n;
    nlohmann::json last;  // tile_oh or unroll_kw
  };
  const std::vector<Case> cases = {
      {"conv2d:N=1,C=8,H=5,W=5,K=1000,R=1,S=1", 4, 16, 5, 1},
      {"conv2d:N=1,C=8,H=6,W=5,K=1000,R=1,S=1", 8, 48, 2, 2},
      {"conv2d:N=1,C=8,H=5,W=5,K=1000,R=1,S=1", 8, 8, 1, 1},  // 8 divides 1000
      {"conv2d:N=1,C=16,H=9,W=9,K=24,R=3,S=3,pad=1", 16, 16, 4, true},
      {"conv2d:N=2,C=6,H=7,W=7,K=24,R=3,S=3,pad=1,stride=2", 3, 16, 2, false},
      {"conv2d:N=1,C=7,H=6,W=6,K=1001,R=3,S=3,pad=1", 7, 32, 6, false},
      {"conv2d:N=1,C=7,H=5,W=5,K=1001,R=1,S=1", 1, 24, 5, 1},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) {
    Workload w = normalized(ragged(), c.workload);
    ConfigEntity config = with(w, c.ic_bn, c.oc_bn, c.reg_n, c.last);
    auto p = ragged().instantiate(w, config, kAvx512);
    ASSERT_TRUE(p.ok()) << c.workload << ": " << p.status().message();
    EXPECT_TRUE(ComputesReference(ragged(), w, *p, seed++))
        << c.workload << " with " << config.to_json()["entity"].dump();
  }
}

// A ragged block reads a producer's packed data as it is but writes NCHW only: its blocks say
// out = 0, and a packed output is an error that says why; a dividing block chains as TVM's does.
TEST(Conv2dRagged, ARaggedBlockWritesNchwOnly) {
  Workload w = normalized(ragged(), "conv2d:N=1,C=16,H=6,W=6,K=40,R=3,S=3,pad=1");
  ConfigEntity ragged16 = with(w, 8, 16, 2, false), whole8 = with(w, 8, 8, 2, false);
  EXPECT_EQ(ragged().activation_blocks(w, ragged16), (ActivationBlocks{8, 0}));
  EXPECT_EQ(ragged().activation_blocks(w, whole8), (ActivationBlocks{8, 8}));
  auto packed = ragged().instantiate(w, ragged16, kAvx512, {8, true});
  ASSERT_FALSE(packed.ok());
  EXPECT_NE(packed.status().message().find("ragged"), std::string::npos)
      << packed.status().message();
  for (const ActivationLayout& layout : {ActivationLayout{8, false}, ActivationLayout{4, false}}) {
    auto p = ragged().instantiate(w, ragged16, kAvx512, layout);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->buffers[0]->shape,
              (std::vector<int64_t>{1, 16 / layout.data_block, 6, 6, layout.data_block}));
  }
  auto chained = ragged().instantiate(w, whole8, kAvx512, {8, true});
  ASSERT_TRUE(chained.ok()) << chained.status().message();
  EXPECT_EQ(chained->buffers[3]->shape, (std::vector<int64_t>{1, 5, 6, 6, 8}));
}

// As LLVM code for this host, checked by the runner against the double-precision reference.
TEST(Conv2dRagged, BuiltForThisHostRaggedBlocksMatchTheReference) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  const int64_t lanes = target.simd_lanes();
  runner::MeasureOptions check;
  check.time.number = 1;
  check.time.repeat = 1;
  for (const char* text :
       {"conv2d:N=1,C=64,H=7,W=7,K=1000,R=1,S=1", "conv2d:N=1,C=32,H=14,W=14,K=24,R=3,S=3,pad=1",
        "conv2d:N=1,C=13,H=10,W=10,K=1001,R=3,S=3,pad=1"}) {
    Workload w = normalized(ragged(), text);
    const TargetInfo info{static_cast<int>(lanes)};
    ConfigSpace space = ragged().space(w);
    for (int64_t oc_bn : {lanes, 2 * lanes, int64_t{48}}) {
      if (oc_bn > conv::geometry(w).k) continue;  // no such knob value
      ConfigEntity base = ragged().default_config(w, space, info);
      ConfigEntity config =
          with(w, inner(base, "tile_ic"), oc_bn, inner(base, "tile_ow"),
               base.find("tile_oh") ? base.other("tile_oh").val : base.other("unroll_kw").val);
      MeasureResult m = runner::check_config(ragged(), w, config, target, check, pool);
      EXPECT_EQ(m.error, MeasureError::kNoError) << text << " oc_bn=" << oc_bn << ": " << m.message;
      EXPECT_LE(m.relative_error, 1e-5) << text << " oc_bn=" << oc_bn;
    }
  }
}

// x [1, 16, 6, 6] -> Conv 1x1 (K=997) -> Relu -> Conv 3x3 pad 1 (K=16) -> y. A prime channel
// count takes the ragged template untuned on AVX2 as on AVX-512 (TVM's blocks: 1 lane), whose
// NCHW output the second conv packs; the output matches a direct double-precision evaluation.
TEST(Conv2dRagged, AnUntunedModelRunsItsRaggedConvIntoTheNext) {
  constexpr int kK = 997;
  testing::OnnxModel m;
  m.input("x", {1, 16, 6, 6});
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto values = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  const std::vector<float> w1 = values(kK * 16), b1 = values(kK);
  const std::vector<float> w2 = values(16 * kK * 9), b2 = values(16);
  m.floats("w1", {kK, 16, 1, 1}, w1);
  m.floats("b1", {kK}, b1);
  m.floats("w2", {16, kK, 3, 3}, w2);
  m.floats("b2", {16}, b2);
  m.node("Conv", {"x", "w1", "b1"}, {"c1"});
  m.node("Relu", {"c1"}, {"r1"});
  onnx::NodeProto* conv = m.node("Conv", {"r1", "w2", "b2"}, {"y"});
  testing::OnnxModel::attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  testing::OnnxModel::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.output("y");
  const std::string model = m.write("ragged_two_convs");

  Result<frontend::Graph> graph = frontend::import_onnx(model);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  compiler::CompileReport report;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, {}, &report);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  bool on_ragged = false;
  for (const compiler::CompiledTask& t : report.tasks) {
    if (t.template_name == "conv2d_NCHWc_ragged.x86") {
      on_ragged = true;
      EXPECT_NE(t.workload.find("K=997"), std::string::npos) << t.workload;
      EXPECT_EQ(t.source, compiler::ConfigSource::kDefault);
    }
  }
  EXPECT_TRUE(on_ragged);

  std::vector<float> x(16 * 36);
  for (float& v : x) v = dist(rng);
  Result<std::unique_ptr<GraphExecutor>> exec = GraphExecutor::create(*artifact, 2, "ragged");
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  ASSERT_TRUE((*exec)->set_input("x", x).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);

  std::vector<double> r1(kK * 36);
  for (int k = 0; k < kK; ++k) {
    for (int i = 0; i < 36; ++i) {
      double acc = b1[k];
      for (int c = 0; c < 16; ++c) acc += double(w1[k * 16 + c]) * x[c * 36 + i];
      r1[k * 36 + i] = std::max(acc, 0.0);
    }
  }
  double err = 0, scale = 0;
  ASSERT_EQ(y.size(), 16u * 36);
  for (int k = 0; k < 16; ++k) {
    for (int p = 0; p < 6; ++p) {
      for (int q = 0; q < 6; ++q) {
        double acc = b2[k];
        for (int c = 0; c < kK; ++c) {
          for (int r = 0; r < 3; ++r) {
            for (int s = 0; s < 3; ++s) {
              int h = p + r - 1, v = q + s - 1;
              if (h < 0 || h >= 6 || v < 0 || v >= 6) continue;
              acc += double(w2[((k * kK + c) * 3 + r) * 3 + s]) * r1[c * 36 + h * 6 + v];
            }
          }
        }
        err = testing::max_error(err, std::abs(acc - y[k * 36 + p * 6 + q]));
        scale = std::max(scale, std::abs(acc));
      }
    }
  }
  EXPECT_LE(err / scale, 1e-5);
}

}  // namespace
}  // namespace kiln::ops
