// conv2d_NCHWc.x86: AutoTVM's space (checked against a real TVM log line), fallbacks, workload
// checks, and for a seeded sample of configs on awkward shapes a program that the interpreter
// runs to the reference's answer, or a reasoned InstantiationError.
#include <gtest/gtest.h>

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

const TargetInfo kAvx512{16};
const TargetInfo kAvx2{8};

const Template& conv() { return conv2d_nchwc_template(); }

Workload normalized(const std::string& text) { return ops::normalized(conv(), text); }
std::string normalize_error(const std::string& text) { return ops::normalize_error(conv(), text); }

// Interprets `program` against the conv2d reference (see ReferenceRun).
class Runner : public ReferenceRun {
 public:
  Runner(const Workload& w, const ir::Program& program, uint64_t seed)
      : ReferenceRun(conv(), w, program, seed) {}
  double run(bool timed_only = false) { return relative_error(timed_only); }
};

// ---------------------------------------------------------------------------------------------
// Space, AutoTVM interop.

// The workload of the real TVM 0.10 log line in reference/autotvm.md §3.
constexpr char kResnetStem[] = "conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3";

TEST(Conv2dNchwc, SpaceMatchesTheTvmLog) {
  Workload w = normalized(kResnetStem);
  ConfigSpace space = conv().space(w);
  EXPECT_EQ(space.size(), 308);
  EXPECT_EQ(space.dims(), (std::vector<int64_t>{2, 7, 11, 2}));

  ConfigEntity c172 = space.get(172);
  EXPECT_EQ(c172.to_json()["entity"],
            nlohmann::json::parse(R"([["tile_ic", "sp", [-1, 1]], ["tile_oc", "sp", [-1, 4]],
                                      ["tile_ow", "sp", [-1, 1]], ["unroll_kw", "ot", false]])"));
  ConfigEntity c47 = space.get(47);
  EXPECT_EQ(c47.split("tile_ic").size, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(c47.split("tile_oc").size, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(c47.split("tile_ow").size, (std::vector<int64_t>{-1, 64}));
  EXPECT_EQ(c47.other("unroll_kw").val, true);

  auto from_log = space.from_json_entities(c172.to_json()["entity"]);
  ASSERT_TRUE(from_log.ok()) << from_log.status().message();
  EXPECT_EQ(from_log->index(), 172);
}

TEST(Conv2dNchwc, TvmArgsMatchTheTvmLog) {
  EXPECT_EQ(conv().tvm_args(normalized(kResnetStem)),
            nlohmann::json::parse(R"([["TENSOR", [1, 3, 224, 224], "float32"],
                                      ["TENSOR", [64, 3, 7, 7], "float32"], [2, 2], [3, 3, 3, 3],
                                      [1, 1], "NCHW", "NCHW", "float32"])"));
  nlohmann::json asym = conv().tvm_args(
      normalized("conv2d:N=1,C=8,H=9,W=9,K=4,R=3,S=5,stride_w=2,pad_h=1,pad_w=2,dilation=2"));
  EXPECT_EQ(asym[2], nlohmann::json::array({1, 2}));
  EXPECT_EQ(asym[3], nlohmann::json::array({1, 2, 1, 2}));
  EXPECT_EQ(asym[4], nlohmann::json::array({2, 2}));
  EXPECT_EQ(conv().name(), "conv2d_NCHWc.x86");
  EXPECT_EQ(conv().op(), "conv2d");
}

TEST(Conv2dNchwc, OneByOneKernelsTuneTileOh) {
  ConfigSpace space = conv().space(normalized("conv2d:N=1,C=64,H=56,W=56,K=128,R=1,S=1,stride=2"));
  ASSERT_NE(space.find_knob("tile_oh"), nullptr);
  EXPECT_EQ(space.find_knob("unroll_kw"), nullptr);
  EXPECT_EQ(space.find_knob("tile_oh")->entities.size(), 2u);
  ConfigSpace single_row = conv().space(normalized("conv2d:N=1,C=8,H=1,W=9,K=8,R=1,S=1"));
  EXPECT_EQ(single_row.find_knob("tile_oh")->entities.size(), 1u);
}

TEST(Conv2dNchwc, SpaceHoldsOneDnnLikeRegisterTiles) {
  // ResNet-18's 64@56 3x3 layer: 16 or 32 output channels x 7..28 columns of accumulators.
  ConfigSpace space = conv().space(normalized("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"));
  int found = 0;
  for (int64_t i = 0; i < space.size(); ++i) {
    ConfigEntity c = space.get(i);
    int64_t oc_bn = inner(c, "tile_oc"), reg_n = inner(c, "tile_ow");
    found += (oc_bn == 16 || oc_bn == 32) && reg_n >= 7 && reg_n <= 28;
  }
  EXPECT_EQ(found, 7 * 2 * 5 * 2);  // tile_ic x {16, 32} x {7, 8, 14, 16, 28} x unroll_kw
}

// ---------------------------------------------------------------------------------------------
// Workloads.

TEST(Conv2dNchwc, NormalizeFillsDefaultsCanonically) {
  EXPECT_EQ(normalized("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3").to_string(),
            "conv2d:C=3,H=8,K=4,N=1,R=3,S=3,W=8,dilation=1,groups=1,pad=0,stride=1");
  EXPECT_EQ(normalized("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,stride_h=2,stride_w=2,pad_h=1,pad_w=1")
                .to_string(),
            normalized("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,stride=2,pad=1").to_string());
  Workload asym = normalized("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,stride=2,stride_w=1,pad_w=2");
  EXPECT_EQ(asym.to_string(),
            "conv2d:C=3,H=8,K=4,N=1,R=3,S=3,W=8,dilation=1,groups=1,pad_h=0,pad_w=2,stride_h=2,"
            "stride_w=1");
  EXPECT_EQ(conv().normalize(asym)->to_string(), asym.to_string());  // idempotent
  EXPECT_EQ(conv().outputs(asym)[0].shape, (std::vector<int64_t>{1, 4, 3, 10}));
}

TEST(Conv2dNchwc, NormalizeRejectsWithReasons) {
  std::string depthwise = normalize_error("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,groups=8");
  EXPECT_NE(depthwise.find("depthwise_conv2d:"), std::string::npos) << depthwise;
  EXPECT_NE(depthwise.find("groups=1"), std::string::npos) << depthwise;
  EXPECT_NE(normalize_error("conv2d:N=1,C=8,H=8,W=8,K=4,R=3,S=3,groups=2").find("groups"),
            std::string::npos);
  std::string tall = normalize_error("conv2d:N=1,C=3,H=2,W=8,K=4,R=3,S=3");
  EXPECT_NE(tall.find("height"), std::string::npos) << tall;
  EXPECT_NE(tall.find("R=3"), std::string::npos) << tall;
  std::string wide = normalize_error("conv2d:N=1,C=3,H=8,W=4,K=4,R=3,S=3,dilation=2");
  EXPECT_NE(wide.find("S=3"), std::string::npos) << wide;
  EXPECT_NE(normalize_error("conv2d:N=1,C=3,H=8,W=8,K=4,R=3").find("'S'"), std::string::npos);
  EXPECT_NE(normalize_error("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,pads=1").find("pads"),
            std::string::npos);
  EXPECT_NE(normalize_error("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,stride_w=0").find("stride_w"),
            std::string::npos);
}

TEST(Conv2dNchwc, TensorsAndFlops) {
  Workload w = normalized("conv2d:N=2,C=3,H=11,W=13,K=5,R=3,S=3,stride=2,pad=1");
  auto in = conv().inputs(w);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[0].shape, (std::vector<int64_t>{2, 3, 11, 13}));
  EXPECT_EQ(in[1].shape, (std::vector<int64_t>{5, 3, 3, 3}));
  EXPECT_EQ(in[2].shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(conv().outputs(w)[0].shape, (std::vector<int64_t>{2, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(conv().flop(w), 2.0 * 2 * 5 * 6 * 7 * 3 * 3 * 3);
  EXPECT_DOUBLE_EQ(conv().flop(normalized(kResnetStem)), 2.0 * 64 * 112 * 112 * 3 * 7 * 7);
}

// ---------------------------------------------------------------------------------------------
// Fallbacks.

TEST(Conv2dNchwc, FallbackFollowsTvm) {
  Workload w = normalized(kResnetStem);
  ConfigSpace space = conv().space(w);
  ConfigEntity f = conv().fallback(w, space, kAvx512);
  EXPECT_EQ(space.get(f.index()), f);
  EXPECT_EQ(f.entity_string(),
            "[('tile_ic', [-1, 3]), ('tile_oc', [-1, 16]), ('tile_ow', [-1, 28]), "
            "('unroll_kw', False)]");
  EXPECT_EQ(inner(conv().fallback(w, space, kAvx2), "tile_oc"), 8);

  Workload down = normalized("conv2d:N=1,C=64,H=56,W=56,K=128,R=1,S=1,stride=2");
  ConfigEntity f1 = conv().fallback(down, conv().space(down), kAvx512);
  EXPECT_EQ(f1.entity_string(),
            "[('tile_ic', [-1, 16]), ('tile_oc', [-1, 16]), ('tile_ow', [-1, 28]), "
            "('tile_oh', 1)]");
  Workload small = normalized("conv2d:N=1,C=24,H=14,W=14,K=12,R=1,S=1");
  ConfigEntity f2 = conv().fallback(small, conv().space(small), kAvx512);
  EXPECT_EQ(inner(f2, "tile_oc"), 12);
  EXPECT_EQ(inner(f2, "tile_ic"), 12);
  EXPECT_EQ(inner(f2, "tile_ow"), 14);
  EXPECT_EQ(f2.other("tile_oh").val, 2);
}

// ---------------------------------------------------------------------------------------------
// Programs.

// Shapes with odd and prime sizes, tails, 1x1, strides, padding, dilation and batch 2. Each
// samples 64 configs (plus the fallback), every one of which must run correctly.
class Conv2dConfigs : public ::testing::TestWithParam<const char*> {};

TEST_P(Conv2dConfigs, SampledConfigsMatchTheReference) {
  Workload w = normalized(GetParam());
  ConfigSpace space = conv().space(w);
  std::mt19937_64 rng(7);
  std::vector<int64_t> indices = tuner::sample_ints(space, 64, rng);
  indices.push_back(conv().fallback(w, space, kAvx512).index());
  for (int64_t index : indices) {
    ConfigEntity config = space.get(index);
    SCOPED_TRACE(config.entity_string());
    auto program = conv().instantiate(w, config, kAvx512);
    ASSERT_TRUE(program.ok()) << program.status().message();
    Runner runner(w, *program, index);
    EXPECT_LE(runner.run(), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dConfigs,
    ::testing::Values("conv2d:N=1,C=4,H=7,W=7,K=8,R=3,S=3,pad=1",
                      "conv2d:N=1,C=3,H=11,W=13,K=5,R=3,S=3,stride=2,pad=1",
                      "conv2d:N=1,C=5,H=13,W=13,K=7,R=3,S=3", "conv2d:N=2,C=6,H=5,W=6,K=4,R=1,S=1",
                      "conv2d:N=1,C=8,H=9,W=9,K=6,R=1,S=1,stride=2,pad=1",
                      "conv2d:N=1,C=4,H=9,W=10,K=4,R=3,S=3,pad=2,dilation=2",
                      "conv2d:N=1,C=2,H=8,W=13,K=3,R=3,S=5,stride_w=2,pad_h=1,pad_w=2",
                      "conv2d:N=1,C=3,H=15,W=15,K=4,R=7,S=7,stride=2,pad=3"));

TEST(Conv2dNchwc, TimedStagesAloneRecomputeTheOutput) {
  Workload w = normalized("conv2d:N=2,C=4,H=6,W=7,K=6,R=3,S=3,pad=1");
  ConfigSpace space = conv().space(w);
  for (int64_t index : {int64_t{0}, space.size() / 3, space.size() - 1}) {
    auto program = conv().instantiate(w, space.get(index), kAvx512);
    ASSERT_TRUE(program.ok()) << program.status().message();
    EXPECT_EQ(program->stages.size(), 3u);
    EXPECT_FALSE(program->stages[0].timed);
    EXPECT_FALSE(program->stages[1].timed);
    EXPECT_TRUE(program->stages[2].timed);
    Runner runner(w, *program, 1);
    EXPECT_LE(runner.run(), 1e-4);
    EXPECT_LE(runner.run(/*timed_only=*/true), 1e-4);
  }
}

TEST(Conv2dNchwc, WideBlocksSplitIntoSimdBodiesAndSpillRowsToWorkspace) {
  // oc_bn = 200 lanes: SIMD bodies of 64 + 64 + 64 + 8; a 96 x 200 row does not fit on the stack.
  Workload w = normalized("conv2d:N=1,C=2,H=2,W=90,K=200,R=1,S=1");
  ConfigSpace space = conv().space(w);
  auto config = space.make_config({{"tile_ic", SplitEntity{{-1, 2}}},
                                   {"tile_oc", SplitEntity{{-1, 200}}},
                                   {"tile_ow", SplitEntity{{-1, 16}}},
                                   {"tile_oh", OtherOptionEntity{1}}});
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto program = conv().instantiate(w, *config, kAvx512);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->buffers.back()->name, "conv_rows");
  walk(program->stages[2].body, [](const ir::Stmt& s) {
    if (s->kind == ir::StmtKind::kFor && s->loop_kind == ir::LoopKind::kVectorized) {
      EXPECT_LE(s->extent, 64);
    }
  });
  Runner runner(w, *program, 3);
  EXPECT_LE(runner.run(), 1e-4);
}

TEST(Conv2dNchwc, OversizedTilesStayWithinTheCodegenLimits) {
  Workload w = normalized("conv2d:N=1,C=4,H=64,W=64,K=1024,R=7,S=7,pad=3");
  ConfigSpace space = conv().space(w);
  auto huge_acc = space.make_config({{"tile_oc", SplitEntity{{-1, 1024}}},
                                     {"tile_ow", SplitEntity{{-1, 32}}},
                                     {"unroll_kw", OtherOptionEntity{false}}});
  auto huge_unroll = space.make_config({{"tile_oc", SplitEntity{{-1, 256}}},
                                        {"tile_ow", SplitEntity{{-1, 64}}},
                                        {"unroll_kw", OtherOptionEntity{true}}});
  for (const auto* config : {&huge_acc, &huge_unroll}) {
    ASSERT_TRUE(config->ok()) << config->status().message();
    auto program = conv().instantiate(w, **config, kAvx512);
    ASSERT_TRUE(program.ok()) << (*config)->entity_string() << ": " << program.status().message();
    testing_util::ExpectWithinCodegenLimits(*program, kAvx512, (*config)->entity_string());
  }
  auto foreign = conv().instantiate(w, ConfigEntity(0, {}), kAvx512);
  EXPECT_EQ(foreign.status().code(), StatusCode::kInstantiation);
  EXPECT_NE(foreign.status().message().find("tile_ic"), std::string::npos);
}

// The hot loop of ResNet-18's 64@56 layer is what the code generator turns into register-blocked
// FMAs: an outer parallel loop, a local accumulator tile, unrolled columns and 16-lane SIMD
// bodies with a contiguous weight load and a broadcast data load.
TEST(Conv2dNchwc, HotLoopHasTheRegisterBlockedShape) {
  Workload w = normalized("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1");
  ConfigSpace space = conv().space(w);
  auto config = space.make_config({{"tile_ic", SplitEntity{{-1, 16}}},
                                   {"tile_oc", SplitEntity{{-1, 16}}},
                                   {"tile_ow", SplitEntity{{-1, 28}}},
                                   {"unroll_kw", OtherOptionEntity{false}}});
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto program = conv().instantiate(w, *config, kAvx512);
  ASSERT_TRUE(program.ok()) << program.status().message();
  const ir::Stmt& compute = program->stages[2].body;
  ASSERT_EQ(compute->kind, ir::StmtKind::kFor);
  EXPECT_EQ(compute->loop_kind, ir::LoopKind::kParallel);
  EXPECT_EQ(compute->extent, 4 * 56);
  EXPECT_EQ(ir::count_flops(compute), static_cast<int64_t>(conv().flop(w)));

  int fma_bodies = 0;
  walk(compute, [&](const ir::Stmt& s) {
    if (s->kind == ir::StmtKind::kAllocate && s->buffer->name == "acc") {
      EXPECT_EQ(s->buffer->num_elements(), 28 * 16);
    }
    if (s->kind != ir::StmtKind::kFor || s->loop_kind != ir::LoopKind::kVectorized) return;
    const ir::ExprNode* v = s->loop_var.get();
    ASSERT_EQ(s->body->kind, ir::StmtKind::kStore) << ir::to_string(s);
    if (s->body->buffer->name != "acc" || ir::count_flops(s->body) == 0) return;
    ++fma_bodies;
    EXPECT_EQ(s->extent, 16);
    EXPECT_EQ(ir::linear_coefficient(s->body->index, v), 1);
    ir::visit_exprs(s->body->value, [&](const ir::Expr& e) {
      if (e->kind != ir::ExprKind::kLoad) return;
      int64_t expected = e->buffer->name == "data_vec" ? 0 : 1;
      EXPECT_EQ(ir::linear_coefficient(e->a, v), expected) << ir::to_string(e);
    });
  });
  EXPECT_EQ(fma_bodies, 1);
}

}  // namespace
}  // namespace kiln::ops
