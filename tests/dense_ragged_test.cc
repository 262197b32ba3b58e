// dense_pack_ragged.x86 (ops/dense_ragged.cc): dense_pack.x86's register tile with a row count
// that need not divide M. Its workloads and place among dense's templates, its space, untuned
// configs that fit the target's registers and where compile prefers them, the reference's answer
// for every row count over ragged M (interpreter), and the same as LLVM code on this host.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "builder/target.h"
#include "ops/packed_matmul.h"
#include "ops/registry.h"
#include "runner/build_and_measure.h"
#include "runtime/thread_pool.h"
#include "tests/ops_test_util.h"

namespace kiln::ops {
namespace {

const Template& ragged() { return dense_pack_ragged_template(); }
const Template& pack() { return dense_pack_template(); }

// The first config of `w`'s space with `rows` rows, bn lanes and k_inner unrolled k steps.
ConfigEntity with(const Workload& w, int64_t rows, int64_t bn, int64_t k_inner) {
  ConfigSpace space = ragged().space(w);
  for (int64_t i = 0; i < space.size(); ++i) {
    ConfigEntity c = space.get(i);
    if (c.other("tile_rows").val == rows && inner(c, "tile_x") == bn &&
        inner(c, "tile_k") == k_inner) {
      return c;
    }
  }
  ADD_FAILURE() << "no config of " << w.to_string() << " with " << rows << " rows, bn " << bn
                << ", k_inner " << k_inner;
  return space.get(0);
}

int64_t rows_of(const ConfigEntity& c) { return c.other("tile_rows").val.get<int64_t>(); }

TEST(DenseRagged, AppliesFromEightRowsAndNormalizesAsDensePack) {
  for (const char* text : {"dense:M=8,N=16,K=4", "dense:M=1024,N=1024,K=1024,bias=1"}) {
    Workload w = normalized(ragged(), text);
    EXPECT_EQ(w.to_string(), normalized(pack(), text).to_string());
    EXPECT_EQ(ragged().flop(w), pack().flop(w));
    EXPECT_EQ(ragged().tvm_args(w), pack().tvm_args(w));
    EXPECT_EQ(ragged().inputs(w).size(), pack().inputs(w).size());
  }
  std::string m = normalize_error(ragged(), "dense:M=7,N=16,K=4");
  EXPECT_NE(m.find("M=7"), std::string::npos) << m;
  EXPECT_NE(m.find("dense_pack_ragged.x86"), std::string::npos) << m;
  EXPECT_NE(normalize_error(ragged(), "dense:M=9,N=16").find("K"), std::string::npos);
  EXPECT_TRUE(ragged().extra());
  EXPECT_EQ(find_template("dense_pack_ragged.x86"), &ragged());
  Workload w = *Workload::parse("dense:M=64,N=64,K=64");
  EXPECT_EQ(*resolve_templates(w, ""),
            (std::vector<const Template*>{&dense_nopack_template(), &pack()}));
}

TEST(DenseRagged, SpaceHasEveryRowCountAndUntunedConfigsFitTheRegisters) {
  Workload w = normalized(ragged(), "dense:M=1024,N=1024,K=1024");
  ConfigSpace space = ragged().space(w);
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_rows", "tile_x", "tile_k"}));
  EXPECT_EQ(space.dims()[0], 16);
  Workload ten = normalized(ragged(), "dense:M=10,N=24,K=8");
  EXPECT_EQ(ragged().space(ten).dims()[0], 10);  // no more rows than M

  for (const TargetInfo& target : {kTestAvx512, kTestAvx2, kTestNeon}) {
    for (const Workload& wl : {w, ten, normalized(ragged(), "dense:M=128,N=3072,K=768"),
                               normalized(ragged(), "dense:M=1000,N=1000,K=512")}) {
      ConfigSpace s = ragged().space(wl);
      for (const ConfigEntity& c :
           {ragged().default_config(wl, s, target), ragged().fallback(wl, s, target)}) {
        EXPECT_EQ(s.get(c.index()), c) << wl.to_string();
        EXPECT_TRUE(ragged().instantiate(wl, c, target).ok()) << c.entity_string();
      }
      ConfigEntity d = ragged().default_config(wl, s, target);
      const int64_t vecs = (inner(d, "tile_x") + target.simd_lanes - 1) / target.simd_lanes;
      EXPECT_LE(rows_of(d) * vecs + vecs + 1, target.vector_registers)
          << wl.to_string() << " on " << target.simd_lanes << " lanes";
    }
  }
  // On 16 AVX2 registers: 6 rows x 2 vectors (12 FMA chains), where dense_pack.x86's rows must
  // divide 1024 and its 4 x 2 vectors give 8, just the FMA latency's 2 x 4.
  ConfigEntity d = ragged().default_config(w, space, kTestAvx2);
  EXPECT_EQ(rows_of(d), 6);
  EXPECT_EQ(inner(d, "tile_x"), 16);
  EXPECT_EQ(inner(pack().default_config(w, pack().space(w), kTestAvx2), "tile_y"), 4);
  EXPECT_TRUE(ragged().preferred_untuned(w, kTestAvx2));
  // On 32 AVX-512 registers dense_pack.x86's 8 x 2 vectors already have 16 chains.
  EXPECT_FALSE(ragged().preferred_untuned(w, kTestAvx512));
  // M = 128 on AVX2: 4 x 3 vectors, which divides M.
  EXPECT_FALSE(
      ragged().preferred_untuned(normalized(ragged(), "dense:M=128,N=3072,K=768"), kTestAvx2));
}

// The interpreter computes the reference, with all stages and with the timed one alone, for
// every row count over an M that most do not divide, with a bias, column blocks and k steps.
TEST(DenseRagged, EveryRowCountComputesTheReference) {
  uint64_t seed = 1;
  for (const char* text : {"dense:M=37,N=48,K=20,bias=1", "dense:M=16,N=8,K=3"}) {
    Workload w = normalized(ragged(), text);
    const int64_t most = std::min<int64_t>(16, w.at("M"));
    for (int64_t rows = 1; rows <= most; ++rows) {
      ConfigEntity c = with(w, rows, w.at("N") == 48 ? 16 : 8, 1);
      auto p = ragged().instantiate(w, c, kTestAvx512);
      ASSERT_TRUE(p.ok()) << text << ": " << p.status().message();
      EXPECT_TRUE(ComputesReference(ragged(), w, *p, seed++)) << text << " " << c.entity_string();
      for (const ir::Stage& s : p->stages) EXPECT_TRUE(VectorLoopsAreSimd(s.body));
    }
  }
  // Column blocks per parallel iteration and unrolled k steps.
  Workload w = normalized(ragged(), "dense:M=37,N=48,K=20,bias=1");
  ConfigSpace space = ragged().space(w);
  for (int64_t i = 0; i < space.size(); i += 97) {
    ConfigEntity c = space.get(i);
    auto p = ragged().instantiate(w, c, kTestAvx2);
    ASSERT_TRUE(p.ok()) << c.entity_string() << ": " << p.status().message();
    EXPECT_TRUE(ComputesReference(ragged(), w, *p, seed++)) << c.entity_string();
  }
}

// The rows go in ceil(m / most) tiles whose sizes differ by at most one, none above `most`; a
// count that divides m gives equal tiles of it.
TEST(DenseRagged, RowsGoInTilesAsEvenAsTheyGo) {
  struct Case {
    int64_t m, most, tiles, small, big;
  };
  for (const Case& c : {Case{49, 6, 9, 5, 4}, Case{49, 16, 4, 12, 1}, Case{49, 7, 7, 7, 0},
                        Case{1024, 6, 171, 5, 169}, Case{10, 10, 1, 10, 0}, Case{17, 16, 2, 8, 1},
                        Case{5, 1, 5, 1, 0}}) {
    const EvenRowTiles t = EvenRowTiles::of(c.m, c.most);
    EXPECT_EQ(t.tiles, c.tiles) << c.m << " by " << c.most;
    EXPECT_EQ(t.small, c.small) << c.m << " by " << c.most;
    EXPECT_EQ(t.big, c.big) << c.m << " by " << c.most;
    EXPECT_EQ(t.big * (t.small + 1) + (t.tiles - t.big) * t.small, c.m);
    EXPECT_LE(t.largest(), c.most);
  }
  // Which rows each tile computes is checked by the reference tests: every row count over
  // M = 37 (EveryRowCountComputesTheReference) and over 7x7 pixels (Conv2dFlat).
}

TEST(DenseRagged, RefusesARowCountOutsideItsSpace) {
  Workload w = normalized(ragged(), "dense:M=10,N=8,K=8");
  ConfigSpace space = ragged().space(w);
  for (const char* bad :
       {R"([["tile_rows","ot",0],["tile_x","sp",[-1,1,8]],["tile_k","sp",[-1,8]]])",
        R"([["tile_rows","ot",11],["tile_x","sp",[-1,1,8]],["tile_k","sp",[-1,8]]])",
        R"([["tile_rows","ot","6"],["tile_x","sp",[-1,1,8]],["tile_k","sp",[-1,8]]])"}) {
    EXPECT_FALSE(space.from_json_entities(nlohmann::json::parse(bad)).ok()) << bad;
  }
  // A config of another space (a forged record) is refused by instantiate with a reason.
  Workload big = normalized(ragged(), "dense:M=64,N=8,K=8");
  ConfigEntity sixteen = with(big, 16, 8, 8);
  auto p = ragged().instantiate(w, sixteen, kTestAvx512);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInstantiation);
  EXPECT_NE(p.status().message().find("tile_rows"), std::string::npos) << p.status().message();
}

// As LLVM code for this host, checked by the runner against the double-precision reference.
TEST(DenseRagged, BuiltForThisHostRaggedRowsMatchTheReference) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  const int64_t lanes = target.simd_lanes();
  runner::MeasureOptions check;
  check.time.number = 1;
  check.time.repeat = 1;
  for (const char* text : {"dense:M=100,N=64,K=96,bias=1", "dense:M=61,N=96,K=33"}) {
    Workload w = normalized(ragged(), text);
    for (int64_t rows : {6, 7, 14}) {
      ConfigEntity config = with(w, rows, 2 * lanes, 1);
      MeasureResult m = runner::check_config(ragged(), w, config, target, check, pool);
      EXPECT_EQ(m.error, MeasureError::kNoError) << text << " rows=" << rows << ": " << m.message;
      EXPECT_LE(m.relative_error, 1e-5) << text << " rows=" << rows;
    }
  }
}

}  // namespace
}  // namespace kiln::ops
