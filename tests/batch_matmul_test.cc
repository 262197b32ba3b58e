// batch_matmul.x86: TVM's space and fallback, and for every sampled config a program that the
// interpreter runs to the reference's answer, or a reasoned InstantiationError.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
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

Workload normalized(const std::string& text) {
  return ops::normalized(batch_matmul_template(), text);
}

TEST(BatchMatmulTest, SpaceMatchesTvm) {
  const Template& t = batch_matmul_template();
  EXPECT_EQ(t.name(), "batch_matmul.x86");
  ConfigSpace space = t.space(normalized("batch_matmul:B=12,M=128,N=128,K=64"));
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_y", "tile_x", "tile_k"}));
  EXPECT_EQ(space.dims(), (std::vector<int64_t>{8, 8, 7}));
  EXPECT_EQ(space.get(0 + 8 * 4 + 64 * 4).entity_string(),
            "[('tile_y', [-1, 1]), ('tile_x', [-1, 16]), ('tile_k', [-1, 16])]");
}

TEST(BatchMatmulTest, FallbackFollowsTvm) {
  const Template& t = batch_matmul_template();
  using Sizes = std::vector<std::vector<int64_t>>;
  struct Case {
    std::string workload;
    Sizes sizes;
  };
  for (const Case& c : std::vector<Case>{
           {"batch_matmul:B=12,M=128,N=128,K=64", {{-1, 8}, {-1, 8}, {-1, 16}}},
           {"batch_matmul:B=2,M=12,N=20,K=48", {{-1, 4}, {-1, 4}, {-1, 16}}},
           // TVM's [K // 16, 16] would leave a tail; the largest divisor <= 16 does not.
           {"batch_matmul:B=2,M=7,N=13,K=17", {{-1, 1}, {-1, 1}, {-1, 1}}},
           {"batch_matmul:B=1,M=6,N=8,K=24", {{-1, 2}, {-1, 8}, {-1, 12}}},
       }) {
    SCOPED_TRACE(c.workload);
    Workload w = normalized(c.workload);
    ConfigSpace space = t.space(w);
    ConfigEntity f = t.fallback(w, space, kAvx512);
    EXPECT_EQ(split_sizes(f), c.sizes);
    EXPECT_EQ(space.get(f.index()), f);
    auto p = t.instantiate(w, f, kAvx512);
    ASSERT_TRUE(p.ok()) << p.status().message();
    if (w.at("M") * w.at("N") * w.at("K") * w.at("B") <= 8192) {
      EXPECT_TRUE(ComputesReference(t, w, *p, 3));
    }
  }
}

TEST(BatchMatmulTest, SampledConfigsComputeTheReference) {
  const Template& t = batch_matmul_template();
  for (const char* text : {"batch_matmul:B=2,M=7,N=13,K=17", "batch_matmul:B=3,M=8,N=12,K=16",
                           "batch_matmul:B=1,M=1,N=5,K=4", "batch_matmul:B=2,M=16,N=16,K=12",
                           "batch_matmul:B=1,M=1,N=1,K=1"}) {
    Workload w = normalized(text);
    ConfigSpace space = t.space(w);
    std::mt19937_64 rng(7);
    int accepted = 0;
    for (int64_t i : tuner::sample_ints(space, 60, rng)) {
      ConfigEntity c = space.get(i);
      SCOPED_TRACE(std::string(text) + " " + c.entity_string());
      auto p = t.instantiate(w, c, kAvx512);
      if (!p.ok()) {
        EXPECT_EQ(p.status().code(), StatusCode::kInstantiation);
        EXPECT_FALSE(p.status().message().empty());
        continue;
      }
      ++accepted;
      EXPECT_TRUE(ComputesReference(t, w, *p, i));
      for (const ir::Stage& s : p->stages) EXPECT_TRUE(VectorLoopsAreSimd(s.body));
      int64_t flops = 0;
      for (const ir::Stage& s : p->stages) flops += s.timed ? ir::count_flops(s.body) : 0;
      EXPECT_EQ(static_cast<double>(flops), t.flop(w));
    }
    EXPECT_GT(accepted, 0) << text;
  }
}

TEST(BatchMatmulTest, RegisterTileConfig) {
  const Template& t = batch_matmul_template();
  Workload w = normalized("batch_matmul:B=12,M=128,N=128,K=64");
  EXPECT_EQ(t.flop(w), 2.0 * 12 * 128 * 128 * 64);
  ConfigSpace space = t.space(w);
  auto c = space.make_config({{"tile_y", SplitEntity{{-1, 8}}},
                              {"tile_x", SplitEntity{{-1, 32}}},
                              {"tile_k", SplitEntity{{-1, 4}}}});
  ASSERT_TRUE(c.ok());
  auto p = t.instantiate(w, *c, kAvx512);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->buffers.back()->shape, (std::vector<int64_t>{12, 4, 64, 32}));
  EXPECT_EQ(p->buffers.back()->scope, ir::BufferScope::kWorkspace);
  for (const ir::Stage& s : p->stages) EXPECT_TRUE(s.timed) << s.name;

  auto unroll = space.make_config({{"tile_y", SplitEntity{{-1, 128}}},
                                   {"tile_x", SplitEntity{{-1, 128}}},
                                   {"tile_k", SplitEntity{{-1, 64}}}});
  ASSERT_TRUE(unroll.ok());
  // 64 k-steps of a 128 x 128 tile: TVM builds it; kiln computes the over-large accumulator
  // in sub-tiles and keeps the outer part of the unroll serial.
  auto realized = t.instantiate(w, *unroll, kAvx512);
  ASSERT_TRUE(realized.ok()) << realized.status().message();
  testing_util::ExpectWithinCodegenLimits(*realized, kAvx512, unroll->entity_string());
  EXPECT_FALSE(t.instantiate(w, ConfigEntity(0, {}), kAvx512).ok());
}

TEST(BatchMatmulTest, NormalizeAndTvmArgs) {
  const Template& t = batch_matmul_template();
  Workload w = normalized("batch_matmul:B=2,M=3,N=4,K=5");
  EXPECT_EQ(
      t.tvm_args(w).dump(),
      R"([["TENSOR",[2,3,5],"float32"],["TENSOR",[2,4,5],"float32"],[2,3,4],"float32",false,true])");
  EXPECT_EQ(t.inputs(w)[1].shape, (std::vector<int64_t>{2, 4, 5}));
  EXPECT_EQ(t.outputs(w)[0].shape, (std::vector<int64_t>{2, 3, 4}));
  for (const char* bad : {"batch_matmul:M=3,N=4,K=5", "batch_matmul:B=0,M=3,N=4,K=5",
                          "batch_matmul:B=1,M=3,N=4,K=5,bias=1", "dense:B=1,M=3,N=4,K=5"}) {
    auto r = t.normalize(*Workload::parse(bad));
    EXPECT_FALSE(r.ok()) << bad;
  }
}

}  // namespace
}  // namespace kiln::ops
