// kiln's default configs (ops/default_config.h, Template::default_config): for every template
// and every workload of the shared models and a few others, on AVX2 (16 ymm), AVX-512 (32 zmm)
// and NEON (32 v) targets, the register tile's accumulators and the operand vectors of one step
// fit the target's vector registers (AutoTVM's fallbacks, written for 32, do not on 16), and a
// default config is a config of the template's own space. The accumulators are counted from the
// knobs as each template's compute stage keeps them (acc / CC local buffers), independently of
// the rules that chose them.
#include "ops/default_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "exchange/target_description.h"
#include "frontend/onnx_import.h"
#include "frontend/task_extraction.h"
#include "ir/visitor.h"
#include "ops/conv_common.h"
#include "ops/registry.h"
#include "tests/fixed_target.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::fixed_target;

const fs::path kModels = fs::path(KILN_SHARED_DIR) / "models";

int64_t inner(const ConfigEntity& config, const std::string& knob) {
  const Entity* e = config.find(knob);
  if (!e) return 1;
  if (const auto* split = std::get_if<SplitEntity>(e)) return split->size.back();
  if (const auto* other = std::get_if<OtherOptionEntity>(e)) {
    return other->val.is_number_integer() ? other->val.get<int64_t>() : 1;
  }
  return 1;
}

// Vector registers holding partial sums in the template's compute stage for `config`, counted
// from its knobs (the depthwise template's: from its program, below).
int64_t accumulators(std::string_view tmpl, const ConfigEntity& c, int lanes) {
  auto vectors = [&](int64_t n) { return (n + lanes - 1) / lanes; };
  if (tmpl == "conv2d_NCHWc.x86") {
    return inner(c, "tile_oh") * inner(c, "tile_ow") * vectors(inner(c, "tile_oc"));
  }
  if (tmpl == "group_conv2d_nchw.x86") return inner(c, "tile_ow") * vectors(inner(c, "tile_oc"));
  if (tmpl == "conv2d_NCHWc_ragged.x86") {
    return inner(c, "tile_oh") * inner(c, "tile_ow") * vectors(inner(c, "oc_bn"));
  }
  if (tmpl == "conv2d_NCHWc_winograd.x86") return inner(c, "tile_t") * vectors(inner(c, "tile_oc"));
  if (tmpl == "dense_nopack.x86") {
    return inner(c, "tile_y") * inner(c, "tile_x") * vectors(inner(c, "tile_k"));
  }
  // dense_pack.x86, batch_matmul.x86: CC[tile_y[-1]][tile_x[-1]].
  return inner(c, "tile_y") * vectors(inner(c, "tile_x"));
}

// Floats of the largest `acc` buffer a program allocates. A depthwise tile accumulates its
// block one group of vectors after another (ops/conv_common.h, lane_block): its acc holds
// tile_ow columns of one group.
class AccFloats : public ir::IRVisitor {
 public:
  int64_t floats = 0;

 protected:
  void visit_allocate(const ir::Stmt& stmt) override {
    const ir::Buffer& buffer = stmt->buffer;
    if (buffer->name == "acc") floats = std::max(floats, buffer->shape.at(0));
    IRVisitor::visit_allocate(stmt);
  }
};

int64_t accumulators(std::string_view tmpl, const ConfigEntity& c, int lanes,
                     const ir::Program& program) {
  if (tmpl == "depthwise_conv2d_NCHWc.x86") {
    AccFloats acc;
    for (const ir::Stage& stage : program.stages) acc.visit(stage.body);
    const int64_t columns = inner(c, "tile_ow");
    return columns * ((acc.floats / columns + lanes - 1) / lanes);
  }
  return accumulators(tmpl, c, lanes);
}

struct Case {
  const ops::Template* tmpl;
  ops::Workload workload;
};

// Every template's workloads: the shared models' tasks and a few shapes of each operator.
std::vector<Case> cases() {
  std::vector<ops::Workload> workloads;
  for (const char* model : {"resnet18", "mobilenet_v2", "mlp"}) {
    fs::path path = kModels / model / (std::string(model) + ".onnx");
    if (!fs::exists(path)) continue;
    Result<frontend::Graph> graph = frontend::import_onnx(path.string());
    if (!graph.ok()) continue;
    for (const frontend::ModelTask& t : frontend::extract_tasks(*graph).tasks) {
      workloads.push_back(t.workload);
    }
  }
  for (const char* text :
       {"conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1",
        "conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3",
        "conv2d:N=1,C=512,H=7,W=7,K=1000,R=1,S=1", "conv2d:N=1,C=24,H=56,W=56,K=144,R=1,S=1",
        "depthwise_conv2d:N=1,C=144,H=56,W=56,R=3,S=3,pad=1", "dense:M=1,N=1000,K=512",
        "dense:M=128,N=768,K=768", "dense:M=7,N=13,K=5", "batch_matmul:B=12,M=128,N=64,K=128",
        "batch_matmul:B=1,M=3,N=5,K=7",
        "group_conv2d:N=1,C=48,H=56,W=56,K=48,R=3,S=3,groups=6,pad=1",
        "group_conv2d:N=1,C=440,H=7,W=7,K=440,R=3,S=3,groups=55,pad=1"}) {
    workloads.push_back(*ops::Workload::parse(text));
  }
  std::vector<Case> out;
  for (const ops::Template* tmpl : ops::all_templates()) {
    for (const ops::Workload& w : workloads) {
      if (w.op != tmpl->op()) continue;
      Result<ops::Workload> normalized = tmpl->normalize(w);
      if (normalized.ok()) out.push_back({tmpl, *normalized});
    }
  }
  return out;
}

const Target kTargets[] = {
    fixed_target("x86_64-pc-linux-gnu", "znver3"), fixed_target("x86_64-pc-linux-gnu", "znver4"),
    fixed_target("x86_64-pc-linux-gnu", "znver5"), fixed_target("x86_64-pc-linux-gnu", "haswell"),
    fixed_target("aarch64-linux-gnu", "generic"),
};

TEST(DefaultConfig, AccumulatorsFitTheTargetsRegisters) {
  std::vector<Case> all = cases();
  ASSERT_GT(all.size(), 10u);
  for (const Target& target : kTargets) {
    const ops::TargetInfo info = describe(target).template_info();
    for (const Case& c : all) {
      SCOPED_TRACE(target.cpu + " " + std::string(c.tmpl->name()) + " " + c.workload.to_string());
      ConfigSpace space = c.tmpl->space(c.workload);
      ConfigEntity config = c.tmpl->default_config(c.workload, space, info);
      // A config of the space: the index names the same entities.
      EXPECT_EQ(space.get(config.index()).to_json(), config.to_json());
      Result<ir::Program> program = c.tmpl->instantiate(c.workload, config, info);
      ASSERT_TRUE(program.ok()) << program.status().message();
      // Room for at least one operand vector and one broadcast besides the accumulators.
      EXPECT_LE(accumulators(c.tmpl->name(), config, info.simd_lanes, *program),
                info.vector_registers - 2)
          << config.entity_string();
    }
  }
}

// What the defaults replace: on 16 ymm registers AutoTVM's conv fallback runs out of registers
// (ResNet-18's 64->64 3x3 layer: 28 accumulators), so the check above can fail.
TEST(DefaultConfig, AutotvmsFallbackOverflowsSixteenRegisters) {
  const ops::Template* conv = ops::find_template("conv2d_NCHWc.x86");
  ASSERT_NE(conv, nullptr);
  ops::Workload w =
      *conv->normalize(*ops::Workload::parse("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"));
  const ops::TargetInfo avx2 = describe(kTargets[0]).template_info();
  ConfigSpace space = conv->space(w);
  EXPECT_GT(accumulators(conv->name(), conv->fallback(w, space, avx2), avx2.simd_lanes),
            avx2.vector_registers);
  ConfigEntity chosen = conv->default_config(w, space, avx2);
  EXPECT_LE(accumulators(conv->name(), chosen, avx2.simd_lanes), avx2.vector_registers - 2);
  // Enough independent accumulators to cover the FMA latency on both units.
  EXPECT_GE(accumulators(conv->name(), chosen, avx2.simd_lanes),
            int64_t{avx2.fma_units} * avx2.fma_latency);
}

// A's rows K floats apart share one L1 set when 4 KiB divides the stride: the packed matmul
// tiles broadcast from at most kMaxRowsPerL1Set of them (16 rows at K=1024 halved dense_pack's
// speed on Zen 4), and from more where the rows spread over several sets.
TEST(DefaultConfig, MatmulTilesReadFewRowsOfOneL1Set) {
  EXPECT_EQ(ops::rows_per_l1_set(16, 4096), 16);
  EXPECT_EQ(ops::rows_per_l1_set(16, 8192), 16);
  EXPECT_EQ(ops::rows_per_l1_set(16, 2048), 8);
  EXPECT_EQ(ops::rows_per_l1_set(16, 1024), 4);
  EXPECT_EQ(ops::rows_per_l1_set(16, 3072), 4);  // gcd 1024: four sets
  EXPECT_EQ(ops::rows_per_l1_set(3, 4100), 1);
  for (const Target& target : kTargets) {
    const ops::TargetInfo info = describe(target).template_info();
    for (const auto& [tmpl, text, stride] :
         std::vector<std::tuple<const char*, const char*, int64_t>>{
             {"dense_pack.x86", "dense:M=1024,N=1024,K=1024", 4096},
             {"dense_pack.x86", "dense:M=128,N=256,K=2048", 8192},
             {"dense_pack.x86", "dense:M=128,N=768,K=256", 1024},
             {"batch_matmul.x86", "batch_matmul:B=4,M=128,N=128,K=1024", 4096}}) {
      const ops::Template* t = ops::find_template(tmpl);
      ops::Workload w = *t->normalize(*ops::Workload::parse(text));
      ConfigEntity config = t->default_config(w, t->space(w), info);
      EXPECT_LE(ops::rows_per_l1_set(inner(config, "tile_y"), stride), ops::kMaxRowsPerL1Set)
          << target.cpu << " " << text << " " << config.entity_string();
    }
  }
  // Where the rows spread over four sets, the tile may take more than kMaxRowsPerL1Set.
  const ops::Template* dense = ops::find_template("dense_pack.x86");
  ops::Workload w = *dense->normalize(*ops::Workload::parse("dense:M=128,N=1024,K=256"));
  const ops::TargetInfo avx512 = describe(kTargets[1]).template_info();
  EXPECT_GT(inner(dense->default_config(w, dense->space(w), avx512), "tile_y"),
            ops::kMaxRowsPerL1Set);
}

TEST(DefaultConfig, TileEfficiencyRefusesSpillingTiles) {
  ops::TargetInfo avx2 = describe(kTargets[0]).template_info();
  ops::RegisterTile fits{12, 3, 12, 6, 1.0};
  ops::RegisterTile spills{28, 2, 28, 29, 1.0};
  EXPECT_GT(ops::tile_efficiency(fits, avx2), 0.9);
  EXPECT_EQ(ops::tile_efficiency(spills, avx2), 0.0);
  // Too few accumulators wait on the FMA latency.
  ops::RegisterTile latency_bound{2, 2, 2, 3, 1.0};
  EXPECT_LT(ops::tile_efficiency(latency_bound, avx2), 0.5);
}

// Channel counts the vector width does not divide (MnasNet's 24, 40, 72, 120 on 16 lanes) get
// the block of at most two vectors with the fewest idle lanes, not the largest divisor of one
// vector (40 -> 10 used a vector at 62.5 % and broadcast each input twice as often as 20 does).
TEST(DefaultConfig, ChannelBlocksLeaveTheFewestLanesIdle) {
  const ops::TargetInfo avx2 = describe(kTargets[0]).template_info();
  const ops::TargetInfo avx512 = describe(kTargets[1]).template_info();
  ASSERT_EQ(avx2.simd_lanes, 8);
  ASSERT_EQ(avx512.simd_lanes, 16);
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> zmm = {
      // channels, max vectors, block
      {64, 2, 32},   {48, 2, 16}, {40, 2, 20}, {72, 2, 24}, {24, 2, 24},   {120, 2, 30},
      {1000, 2, 25}, {3, 2, 3},   {1, 2, 1},   {40, 1, 10}, {1001, 2, 13}, {64, 1, 16}};
  for (const auto& [channels, vectors, block] : zmm) {
    EXPECT_EQ(ops::channel_block(channels, vectors, avx512), block) << channels << " " << vectors;
  }
  // Every count that is a multiple of eight keeps whole ymm vectors on AVX2.
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> ymm = {
      {40, 2, 8}, {72, 2, 8}, {24, 2, 8}, {64, 2, 16}, {1000, 2, 8}, {120, 2, 8}, {3, 2, 3}};
  for (const auto& [channels, vectors, block] : ymm) {
    EXPECT_EQ(ops::channel_block(channels, vectors, avx2), block) << channels << " " << vectors;
  }
}

// A depthwise conv's border tiles copy their padded input window before their R * S FMAs per
// output: the default takes tiles narrow enough that most are interior (MnasNet's 72-channel 3x3
// on 56x56 padded by 1 ran 1.7x slower in TVM-sized tiles of 14 columns, half of them border
// tiles, than in tiles of 4 to 7).
TEST(DefaultConfig, DepthwiseTilesAreMostlyInteriorWherePaddingCostsAWindowCopy) {
  ops::conv::Geometry g;
  g.c = g.k = 72;
  g.h = g.w = g.p = g.q = 56;
  g.r = g.s = 3;
  g.pad_h = g.pad_w = 1;
  EXPECT_GT(ops::conv::border_window_share(g, 7, 1), ops::conv::border_window_share(g, 14, 1));
  EXPECT_GT(ops::conv::border_window_share(g, 14, 1), ops::conv::border_window_share(g, 28, 1));
  ops::conv::Geometry unpadded = g;
  unpadded.pad_h = unpadded.pad_w = 0;
  unpadded.p = unpadded.q = 54;
  EXPECT_DOUBLE_EQ(ops::conv::border_window_share(unpadded, 27, 1), 1.0);

  const ops::Template* depthwise = ops::find_template("depthwise_conv2d_NCHWc.x86");
  ASSERT_NE(depthwise, nullptr);
  ops::Workload w = *depthwise->normalize(
      *ops::Workload::parse("depthwise_conv2d:N=1,C=72,H=56,W=56,R=3,S=3,pad=1"));
  for (const Target& target : kTargets) {
    const ops::TargetInfo info = describe(target).template_info();
    ConfigEntity config = depthwise->default_config(w, depthwise->space(w), info);
    EXPECT_LE(inner(config, "tile_ow"), 8) << target.cpu << " " << config.entity_string();
  }
}

}  // namespace
}  // namespace kiln
