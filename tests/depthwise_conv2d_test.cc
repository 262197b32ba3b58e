// depthwise_conv2d_NCHWc.x86: AutoTVM's space and fallback, workload checks, and for a seeded
// sample of configs on awkward shapes a program that the interpreter runs to the reference's
// answer, or a reasoned InstantiationError.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "codegen_limits.h"
#include "ir/analysis.h"
#include "ir/interpreter.h"
#include "ir/printer.h"
#include "ops/registry.h"
#include "tests/ops_test_util.h"
#include "tuner/space_walk.h"

namespace kiln::ops {
namespace {

const TargetInfo& kAvx512 = kTestAvx512;
const TargetInfo& kAvx2 = kTestAvx2;

const Template& depthwise() { return depthwise_conv2d_nchwc_template(); }

Workload normalized(const std::string& text) { return ops::normalized(depthwise(), text); }
std::string normalize_error(const std::string& text) {
  return ops::normalize_error(depthwise(), text);
}

// The largest error of all stages of `program` relative to the reference (see ReferenceRun).
double run(const Workload& w, const ir::Program& program, uint64_t seed) {
  return ReferenceRun(depthwise(), w, program, seed).relative_error();
}

// MobileNet-V2's first depthwise layer.
constexpr char kMobileNet[] = "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1";

TEST(DepthwiseConv2dNchwc, SpaceFollowsTvm) {
  Workload w = normalized(kMobileNet);
  ConfigSpace space = depthwise().space(w);
  // tile_ic, tile_oc: the 6 divisors of 32; tile_ow: the 9 divisors of 112 up to 64.
  EXPECT_EQ(space.dims(), (std::vector<int64_t>{6, 6, 9, 2}));
  ConfigEntity c = space.get(597);
  EXPECT_EQ(c.entity_string(),
            "[('tile_ic', [-1, 8]), ('tile_oc', [-1, 8]), ('tile_ow', [-1, 28]), "
            "('unroll_kw', False)]");
  EXPECT_EQ(depthwise().name(), "depthwise_conv2d_NCHWc.x86");
  EXPECT_EQ(depthwise().op(), "depthwise_conv2d");
}

TEST(DepthwiseConv2dNchwc, TvmArgs) {
  EXPECT_EQ(depthwise().tvm_args(normalized(kMobileNet)),
            nlohmann::json::parse(R"([["TENSOR", [1, 32, 112, 112], "float32"],
                                      ["TENSOR", [32, 1, 3, 3], "float32"], [1, 1], [1, 1, 1, 1],
                                      [1, 1], "NCHW", "NCHW", "float32"])"));
}

TEST(DepthwiseConv2dNchwc, Workloads) {
  Workload w = normalized("depthwise_conv2d:N=2,C=6,H=9,W=11,R=3,S=3,stride=2,pad=1,K=6");
  EXPECT_EQ(w.to_string(), "depthwise_conv2d:C=6,H=9,N=2,R=3,S=3,W=11,dilation=1,pad=1,stride=2");
  auto in = depthwise().inputs(w);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[1].shape, (std::vector<int64_t>{6, 1, 3, 3}));
  EXPECT_EQ(in[2].shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(depthwise().outputs(w)[0].shape, (std::vector<int64_t>{2, 6, 5, 6}));
  EXPECT_DOUBLE_EQ(depthwise().flop(w), 2.0 * 2 * 6 * 5 * 6 * 3 * 3);

  std::string k = normalize_error("depthwise_conv2d:N=1,C=8,H=8,W=8,R=3,S=3,K=16");
  EXPECT_NE(k.find("K=16"), std::string::npos) << k;
  std::string empty = normalize_error("depthwise_conv2d:N=1,C=8,H=8,W=2,R=3,S=5,pad=1");
  EXPECT_NE(empty.find("S=5"), std::string::npos) << empty;
  EXPECT_NE(normalize_error("depthwise_conv2d:N=1,C=8,H=8,W=8,R=3,S=3,groups=8").find("groups"),
            std::string::npos);
}

TEST(DepthwiseConv2dNchwc, FallbackFollowsTvm) {
  Workload w = normalized(kMobileNet);
  ConfigSpace space = depthwise().space(w);
  ConfigEntity f = depthwise().fallback(w, space, kAvx512);
  EXPECT_EQ(space.get(f.index()), f);
  EXPECT_EQ(f.entity_string(),
            "[('tile_ic', [-1, 16]), ('tile_oc', [-1, 16]), ('tile_ow', [-1, 28]), "
            "('unroll_kw', False)]");
  EXPECT_EQ(inner(depthwise().fallback(w, space, kAvx2), "tile_oc"), 8);
  Workload odd = normalized("depthwise_conv2d:N=1,C=24,H=7,W=7,R=3,S=3,pad=1");
  ConfigEntity g = depthwise().fallback(odd, depthwise().space(odd), kAvx512);
  EXPECT_EQ(inner(g, "tile_oc"), 12);
  EXPECT_EQ(inner(g, "tile_ow"), 7);
}

// Shapes with odd sizes, strides, padding, dilation, batch 2 and every pairing of ic_bn and
// oc_bn (equal, multiples, neither). Each checks 64 sampled configs and the fallback.
class DepthwiseConfigs : public ::testing::TestWithParam<const char*> {};

TEST_P(DepthwiseConfigs, SampledConfigsMatchTheReference) {
  Workload w = normalized(GetParam());
  ConfigSpace space = depthwise().space(w);
  std::mt19937_64 rng(11);
  std::vector<int64_t> indices = tuner::sample_ints(space, 64, rng);
  indices.push_back(depthwise().fallback(w, space, kAvx512).index());
  for (int64_t index : indices) {
    ConfigEntity config = space.get(index);
    SCOPED_TRACE(config.entity_string());
    // AVX2's 16 registers split the wider tiles into groups of vectors (lane_block).
    for (const TargetInfo* target : {&kAvx512, &kAvx2}) {
      auto program = depthwise().instantiate(w, config, *target);
      ASSERT_TRUE(program.ok()) << program.status().message();
      EXPECT_LE(run(w, *program, index), 1e-4) << target->simd_lanes << " lanes";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DepthwiseConfigs,
    ::testing::Values("depthwise_conv2d:N=1,C=8,H=7,W=7,R=3,S=3,pad=1",
                      "depthwise_conv2d:N=2,C=6,H=9,W=11,R=3,S=3,stride=2,pad=1",
                      "depthwise_conv2d:N=1,C=12,H=10,W=10,R=5,S=5,pad=2,dilation=2",
                      "depthwise_conv2d:N=1,C=16,H=6,W=6,R=3,S=3,K=16",
                      "depthwise_conv2d:N=1,C=4,H=7,W=12,R=3,S=3,stride_w=2,pad_w=1"));

TEST(DepthwiseConv2dNchwc, MatchingBlocksReadContiguousLanes) {
  Workload w = normalized(kMobileNet);
  ConfigSpace space = depthwise().space(w);
  auto config = space.make_config({{"tile_ic", SplitEntity{{-1, 16}}},
                                   {"tile_oc", SplitEntity{{-1, 16}}},
                                   {"tile_ow", SplitEntity{{-1, 14}}},
                                   {"unroll_kw", OtherOptionEntity{true}}});
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto program = depthwise().instantiate(w, *config, kAvx512);
  ASSERT_TRUE(program.ok()) << program.status().message();
  const ir::Stmt& compute = program->stages[2].body;
  EXPECT_TRUE(program->stages[2].timed);
  EXPECT_EQ(compute->loop_kind, ir::LoopKind::kParallel);
  EXPECT_EQ(ir::count_flops(compute), static_cast<int64_t>(depthwise().flop(w)));
  int fma_bodies = 0;
  walk(compute, [&](const ir::Stmt& s) {
    if (s->kind != ir::StmtKind::kFor || s->loop_kind != ir::LoopKind::kVectorized) return;
    if (s->body->kind != ir::StmtKind::kStore || ir::count_flops(s->body) == 0) return;
    ++fma_bodies;
    ir::visit_exprs(s->body->value, [&](const ir::Expr& e) {
      if (e->kind != ir::ExprKind::kLoad) return;
      EXPECT_EQ(ir::linear_coefficient(e->a, s->loop_var.get()), 1) << ir::to_string(e);
    });
  });
  EXPECT_EQ(fma_bodies, 1);
}

// Floats of the largest local `acc` buffer in the program: the accumulators a tile keeps live.
int64_t accumulator_floats(const ir::Program& program) {
  int64_t floats = 0;
  for (const ir::Stage& stage : program.stages) {
    walk(stage.body, [&](const ir::Stmt& s) {
      if (s->kind == ir::StmtKind::kAllocate && s->buffer->name == "acc") {
        floats = std::max(floats, s->buffer->shape.at(0));
      }
    });
  }
  return floats;
}

// A 7-column tile of two vectors needs 14 accumulators, 2 weight vectors and a data vector:
// more than AVX2's 16 registers. The template then accumulates one vector of the block at a
// time (7 accumulators), and still computes the reference; within 32 registers it keeps the
// whole block, and a tile that fits keeps it on AVX2 too.
TEST(DepthwiseConv2dNchwc, TilesBeyondTheRegistersAccumulateOneVectorGroupAtATime) {
  Workload w = normalized("depthwise_conv2d:N=1,C=64,H=7,W=7,R=3,S=3,pad=1");
  ConfigSpace space = depthwise().space(w);
  auto config_of = [&](int64_t bn, int64_t ow) {
    return space.make_config({{"tile_ic", SplitEntity{{-1, bn}}},
                              {"tile_oc", SplitEntity{{-1, bn}}},
                              {"tile_ow", SplitEntity{{-1, ow}}},
                              {"unroll_kw", OtherOptionEntity{true}}});
  };
  struct Expectation {
    const TargetInfo* target;
    int64_t bn, ow, acc_floats;
  };
  for (const Expectation& e :
       {Expectation{&kAvx2, 16, 7, 7 * 8}, Expectation{&kAvx2, 16, 1, 16},
        Expectation{&kAvx2, 32, 7, 7 * 8}, Expectation{&kAvx512, 32, 7, 7 * 32},
        Expectation{&kAvx512, 64, 7, 7 * 32}}) {
    auto config = config_of(e.bn, e.ow);
    ASSERT_TRUE(config.ok()) << config.status().message();
    SCOPED_TRACE(std::to_string(e.target->simd_lanes) + " lanes, " + config->entity_string());
    auto program = depthwise().instantiate(w, *config, *e.target);
    ASSERT_TRUE(program.ok()) << program.status().message();
    EXPECT_EQ(accumulator_floats(*program), e.acc_floats);
    EXPECT_LE(run(w, *program, 3), 1e-4);
  }
}

TEST(DepthwiseConv2dNchwc, OversizedTilesStayWithinTheCodegenLimits) {
  Workload w = normalized("depthwise_conv2d:N=1,C=2048,H=66,W=66,R=7,S=7,pad=3");
  ConfigSpace space = depthwise().space(w);
  auto config = space.make_config({{"tile_oc", SplitEntity{{-1, 1024}}},
                                   {"tile_ow", SplitEntity{{-1, 33}}},
                                   {"unroll_kw", OtherOptionEntity{true}}});
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto program = depthwise().instantiate(w, *config, kAvx512);
  ASSERT_TRUE(program.ok()) << program.status().message();
  testing_util::ExpectWithinCodegenLimits(*program, kAvx512, config->entity_string());
}

}  // namespace
}  // namespace kiln::ops
