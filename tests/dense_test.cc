// dense_nopack.x86 and dense_pack.x86: AutoTVM's spaces and fallbacks, and for every sampled
// config a program that the interpreter runs to the reference's answer, or a reasoned
// InstantiationError.
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
#include "ops/tvm_args_parse.h"
#include "tests/ops_test_util.h"
#include "tuner/space_walk.h"

namespace kiln::ops {
namespace {

const TargetInfo kAvx512{16};

Workload parse(const std::string& text) {
  auto w = Workload::parse(text);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return *w;
}

int64_t timed_flops(const ir::Program& p) {
  int64_t n = 0;
  for (const ir::Stage& s : p.stages) n += s.timed ? ir::count_flops(s.body) : 0;
  return n;
}

// Checks a sample of configs (all of a small space) and the fallback; returns how many
// were accepted.
int CheckSampledConfigs(const Template& t, const std::string& text, int samples) {
  Workload w = normalized(t, text);
  ConfigSpace space = t.space(w);
  std::mt19937_64 rng(42);
  std::vector<ConfigEntity> configs;
  for (int64_t i : tuner::sample_ints(space, samples, rng)) configs.push_back(space.get(i));
  configs.push_back(t.fallback(w, space, kAvx512));
  int accepted = 0;
  for (const ConfigEntity& c : configs) {
    SCOPED_TRACE(std::string(t.name()) + " " + text + " " + c.entity_string());
    auto program = t.instantiate(w, c, kAvx512);
    if (!program.ok()) {
      EXPECT_EQ(program.status().code(), StatusCode::kInstantiation);
      EXPECT_FALSE(program.status().message().empty());
      continue;
    }
    ++accepted;
    EXPECT_TRUE(ComputesReference(t, w, *program, c.index()));
    for (const ir::Stage& s : program->stages) EXPECT_TRUE(VectorLoopsAreSimd(s.body));
  }
  return accepted;
}

TEST(DenseTest, NopackSpaceMatchesAutoTvm) {
  const Template& t = dense_nopack_template();
  ConfigSpace space = t.space(normalized(t, "dense:M=1,N=1000,K=512"));
  EXPECT_EQ(space.range_length(), 160);
  EXPECT_EQ(space.dims(), (std::vector<int64_t>{1, 16, 10}));
  ConfigEntity c = space.get(68);
  EXPECT_EQ(c.entity_string(), "[('tile_y', [-1, 1]), ('tile_x', [-1, 8]), ('tile_k', [-1, 16])]");
}

TEST(DenseTest, PackSpaceMatchesAutoTvm) {
  const Template& t = dense_pack_template();
  ConfigSpace space = t.space(normalized(t, "dense:M=1,N=1000,K=512"));
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_y", "tile_x", "tile_k", "tile_inner"}));
  EXPECT_EQ(space.dims(), (std::vector<int64_t>{1, 100, 10, 1}));
  // M = 64: 3-way splits are the pairs (i, j) with i + j <= 6 of 2^i * 2^j; tile_inner keeps
  // 1, 2, 4, 8, 16 (size[-1] <= 16).
  ConfigSpace m64 = t.space(normalized(t, "dense:M=64,N=8,K=8"));
  EXPECT_EQ(m64.dims()[0], 28);
  EXPECT_EQ(m64.dims()[3], 5);
}

TEST(DenseTest, NopackFallbackFollowsAutoTvm) {
  const Template& t = dense_nopack_template();
  Workload w = normalized(t, "dense:M=1,N=1000,K=512");
  ConfigSpace space = t.space(w);
  using Sizes = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(split_sizes(t.fallback(w, space, kAvx512)), (Sizes{{-1, 1}, {-1, 1}, {-1, 32}}));
  EXPECT_EQ(split_sizes(t.fallback(w, space, TargetInfo{8})), (Sizes{{-1, 1}, {-1, 1}, {-1, 16}}));
  EXPECT_EQ(split_sizes(t.fallback(w, space, TargetInfo{4})), (Sizes{{-1, 1}, {-1, 1}, {-1, 8}}));
  EXPECT_TRUE(t.instantiate(w, t.fallback(w, space, kAvx512), kAvx512).ok());

  Workload odd = normalized(t, "dense:M=7,N=13,K=17");
  ConfigEntity c = t.fallback(odd, t.space(odd), kAvx512);
  EXPECT_EQ(split_sizes(c), (Sizes{{-1, 7}, {-1, 1}, {-1, 17}}));  // tile_y = [1, M]

  // TVM's nopack fallback puts all M rows in one tile: past 16 KiB floats it cannot be a
  // stack tile, so the tile is computed in row blocks, and the 1024-row unroll partly serial.
  Workload big = normalized(t, "dense:M=1024,N=1024,K=1024");
  auto p = t.instantiate(big, t.fallback(big, t.space(big), kAvx512), kAvx512);
  ASSERT_TRUE(p.ok()) << p.status().message();
  testing_util::ExpectWithinCodegenLimits(*p, kAvx512, "dense_nopack fallback 1024^3");
  // 2*M*N*K multiply-adds, plus M*N*vec adds of the lane reduction (vec = 32).
  EXPECT_EQ(timed_flops(*p), (int64_t{2} << 30) + int64_t{1024} * 1024 * 32);
}

TEST(DenseTest, PackFallbackFollowsAutoTvm) {
  const Template& t = dense_pack_template();
  using Sizes = std::vector<std::vector<int64_t>>;
  struct Case {
    std::string workload;
    Sizes sizes;
  };
  for (const Case& c : std::vector<Case>{
           {"dense:M=1024,N=1024,K=1024", {{-1, 32, 8}, {-1, 8, 32}, {-1, 1}, {-1, 8}}},
           {"dense:M=1,N=1000,K=512", {{-1, 1, 1}, {-1, 8, 25}, {-1, 1}, {-1, 1}}},
           {"dense:M=7,N=13,K=17", {{-1, 1, 1}, {-1, 1, 13}, {-1, 1}, {-1, 1}}},
           {"dense:M=12,N=96,K=5,bias=1", {{-1, 1, 4}, {-1, 1, 32}, {-1, 1}, {-1, 4}}},
       }) {
    SCOPED_TRACE(c.workload);
    Workload w = normalized(t, c.workload);
    ConfigSpace space = t.space(w);
    ConfigEntity f = t.fallback(w, space, kAvx512);
    EXPECT_EQ(split_sizes(f), c.sizes);
    EXPECT_EQ(space.get(f.index()), f);
    auto p = t.instantiate(w, f, kAvx512);
    EXPECT_TRUE(p.ok()) << p.status().message();
  }
  // AVX2: the packed width is at most 2 * 8 lanes.
  Workload w = normalized(t, "dense:M=1024,N=1024,K=1024");
  EXPECT_EQ(split_sizes(t.fallback(w, t.space(w), TargetInfo{8}))[1],
            (std::vector<int64_t>{-1, 16, 16}));
}

const char* const kShapes[] = {"dense:M=7,N=13,K=17",        "dense:M=1,N=16,K=32",
                               "dense:M=16,N=24,K=8,bias=1", "dense:M=12,N=1,K=6,bias=1",
                               "dense:M=20,N=12,K=16",       "dense:M=1,N=1,K=1"};

TEST(DenseTest, NopackSampledConfigsComputeTheReference) {
  for (const char* text : kShapes) {
    EXPECT_GT(CheckSampledConfigs(dense_nopack_template(), text, 60), 0) << text;
  }
}

TEST(DenseTest, PackSampledConfigsComputeTheReference) {
  for (const char* text : kShapes) {
    EXPECT_GT(CheckSampledConfigs(dense_pack_template(), text, 60), 0) << text;
  }
}

TEST(DenseTest, PackTileInnerWithPartialBlock) {
  // tile_y inner 6 rows in blocks of tile_inner 4: one block of 4 and one of 2.
  const Template& t = dense_pack_template();
  Workload w = normalized(t, "dense:M=12,N=8,K=5,bias=1");
  ConfigSpace space = t.space(w);
  for (int64_t inner : {1, 2, 3, 4, 6, 12}) {
    auto c = space.make_config({{"tile_y", SplitEntity{{-1, 1, 6}}},
                                {"tile_x", SplitEntity{{-1, 2, 4}}},
                                {"tile_k", SplitEntity{{-1, 5}}},
                                {"tile_inner", SplitEntity{{-1, inner}}}});
    ASSERT_TRUE(c.ok()) << c.status().message();
    auto p = t.instantiate(w, *c, kAvx512);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(ComputesReference(t, w, *p, inner)) << "tile_inner " << inner;
  }
}

TEST(DenseTest, TimedFlopsMatchTheTask) {
  for (const char* text : {"dense:M=7,N=13,K=17", "dense:M=16,N=24,K=8,bias=1"}) {
    for (const Template* t : {&dense_nopack_template(), &dense_pack_template()}) {
      Workload w = normalized(*t, text);
      int64_t m = w.at("M"), n = w.at("N"), k = w.at("K"), bias = w.at("bias");
      EXPECT_EQ(t->flop(w), 2.0 * m * n * k);
      ConfigSpace space = t->space(w);
      std::mt19937_64 rng(1);
      for (int64_t i : tuner::sample_ints(space, 20, rng)) {
        ConfigEntity c = space.get(i);
        auto p = t->instantiate(w, c, kAvx512);
        if (!p.ok()) continue;
        // dense_pack: the FMAs plus the bias add; dense_nopack: the FMAs plus the horizontal
        // sum over tile_k[-1] lanes (into an output initialized with the bias).
        int64_t extra =
            t == &dense_pack_template() ? bias * m * n : m * n * c.split("tile_k").size.back();
        EXPECT_EQ(timed_flops(*p), 2 * m * n * k + extra) << t->name() << " " << c.entity_string();
      }
    }
  }
}

TEST(DenseTest, LibrarySpeedConfigIsInTheSpace) {
  // 8 rows x 32 lanes of accumulators (16 zmm registers), 4 k-steps unrolled.
  const Template& t = dense_pack_template();
  Workload w = normalized(t, "dense:M=1024,N=1024,K=1024");
  ConfigSpace space = t.space(w);
  auto c = space.make_config({{"tile_y", SplitEntity{{-1, 16, 8}}},
                              {"tile_x", SplitEntity{{-1, 4, 32}}},
                              {"tile_k", SplitEntity{{-1, 4}}},
                              {"tile_inner", SplitEntity{{-1, 1}}}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto p = t.instantiate(w, *c, kAvx512);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->stages.size(), 2u);
  EXPECT_FALSE(p->stages[0].timed);
  EXPECT_TRUE(p->stages[1].timed);
  EXPECT_EQ(p->buffers.back()->scope, ir::BufferScope::kWorkspace);
  EXPECT_EQ(p->buffers.back()->shape, (std::vector<int64_t>{32, 1024, 32}));
  EXPECT_EQ(timed_flops(*p), int64_t{2} << 30);
  EXPECT_TRUE(VectorLoopsAreSimd(p->stages[1].body));
  int64_t local = 0;
  walk(p->stages[1].body, [&](const ir::Stmt& s) {
    if (s->kind == ir::StmtKind::kAllocate) local += s->buffer->num_elements();
  });
  EXPECT_EQ(local, 8 * 32);
}

TEST(DenseTest, RealizesTilesBeyondTheCodegenLimits) {
  const Template& t = dense_pack_template();
  Workload w = normalized(t, "dense:M=1024,N=1024,K=1024");
  ConfigSpace space = t.space(w);
  // TVM builds these; kiln builds them within its limits, computing the same FLOPs.
  auto expect_realized = [&](const ConfigEntity& c) {
    auto p = t.instantiate(w, c, kAvx512);
    ASSERT_TRUE(p.ok()) << c.entity_string() << ": " << p.status().message();
    testing_util::ExpectWithinCodegenLimits(*p, kAvx512, c.entity_string());
    EXPECT_EQ(timed_flops(*p), int64_t{2} << 30) << c.entity_string();
  };
  // 1024 k-steps unrolled.
  auto huge_unroll = space.make_config({{"tile_y", SplitEntity{{-1, 1, 8}}},
                                        {"tile_x", SplitEntity{{-1, 1, 32}}},
                                        {"tile_k", SplitEntity{{-1, 1024}}}});
  ASSERT_TRUE(huge_unroll.ok());
  expect_realized(*huge_unroll);
  // A 64 x 1024 accumulator tile.
  auto huge_tile = space.make_config(
      {{"tile_y", SplitEntity{{-1, 1, 64}}}, {"tile_x", SplitEntity{{-1, 1, 1024}}}});
  ASSERT_TRUE(huge_tile.ok());
  expect_realized(*huge_tile);
}

TEST(DenseTest, RejectsEntitiesNotFromItsSpace) {
  const Template& t = dense_pack_template();
  Workload w = normalized(t, "dense:M=1024,N=1024,K=1024");
  auto expect_rejected = [&](const ConfigEntity& c, const std::string& why) {
    auto p = t.instantiate(w, c, kAvx512);
    ASSERT_FALSE(p.ok()) << c.entity_string();
    EXPECT_EQ(p.status().code(), StatusCode::kInstantiation);
    EXPECT_NE(p.status().message().find(why), std::string::npos) << p.status().message();
  };
  // Entities that are not from this space (e.g. a hand-edited log) are errors, not crashes.
  expect_rejected(ConfigEntity(0, {{"tile_y", SplitEntity{{-1, 1, 7}}}}), "tile");
  expect_rejected(ConfigEntity(0, {}), "missing");
  expect_rejected(ConfigEntity(0, {{"tile_y", SplitEntity{{-1, 8}}},
                                   {"tile_x", SplitEntity{{-1, 1, 32}}},
                                   {"tile_k", SplitEntity{{-1, 1}}},
                                   {"tile_inner", SplitEntity{{-1, 1}}}}),
                  "tile_y");
  expect_rejected(ConfigEntity(0, {{"tile_y", OtherOptionEntity{1}}}), "not a split");
}

TEST(DenseTest, NormalizeAndTvmArgs) {
  const Template& t = dense_pack_template();
  Workload w = normalized(t, "dense:M=2,N=3,K=4");
  EXPECT_EQ(w.at("bias"), 0);
  EXPECT_EQ(t.tvm_args(w).dump(),
            R"([["TENSOR",[2,4],"float32"],["TENSOR",[3,4],"float32"],null,"float32"])");
  // TVM's dense task has no bias argument: kiln's fused bias is the same task.
  Workload wb = normalized(t, "dense:M=2,N=3,K=4,bias=1");
  EXPECT_EQ(t.tvm_args(wb).dump(),
            R"([["TENSOR",[2,4],"float32"],["TENSOR",[3,4],"float32"],null,"float32"])");
  EXPECT_EQ(task_workload(t, wb).to_string(), w.to_string());
  EXPECT_EQ(t.inputs(wb).size(), 3u);
  EXPECT_EQ(t.outputs(wb)[0].shape, (std::vector<int64_t>{2, 3}));
  for (const char* bad : {"dense:M=2,N=3", "dense:M=2,N=3,K=4,bias=2", "dense:M=0,N=3,K=4",
                          "dense:M=2,N=3,K=4,groups=1", "conv2d:M=2,N=3,K=4"}) {
    auto r = dense_nopack_template().normalize(parse(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace kiln::ops
