// conv2d_NCHWc_flat.x86 (ops/conv2d_flat.cc): a 1x1 convolution without padding as a matrix
// product over its flattened output pixels, in tiles of any pixel count. Its workloads and place
// among conv2d's templates, its space, untuned configs that fit the target's registers and where
// compile prefers them, the reference's answer for every pixel count (interpreter), a forged
// pixel count refused, and the same as LLVM code on this host. Its layouts are checked with the
// other NCHWc convolutions' (conv_layout_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "builder/target.h"
#include "ops/conv_common.h"
#include "ops/registry.h"
#include "runner/build_and_measure.h"
#include "runtime/thread_pool.h"
#include "tests/ops_test_util.h"

namespace kiln::ops {
namespace {

const Template& flat() { return conv2d_flat_template(); }
const Template& direct() { return conv2d_nchwc_template(); }

// The first config of `w`'s space with these blocks and pixels per tile.
ConfigEntity with(const Workload& w, int64_t ic_bn, int64_t oc_bn, int64_t pixels) {
  ConfigSpace space = flat().space(w);
  for (int64_t i = 0; i < space.size(); ++i) {
    ConfigEntity c = space.get(i);
    if (inner(c, "tile_ic") == ic_bn && inner(c, "tile_oc") == oc_bn &&
        c.other("tile_px").val == pixels) {
      return c;
    }
  }
  ADD_FAILURE() << "no config of " << w.to_string() << " with blocks " << ic_bn << "/" << oc_bn
                << " and " << pixels << " pixels";
  return space.get(0);
}

int64_t pixels_of(const ConfigEntity& c) { return c.other("tile_px").val.get<int64_t>(); }

TEST(Conv2dFlat, AppliesToOneByOneConvsWithoutPaddingAndNormalizesAsTheDirectTemplate) {
  for (const char* text :
       {"conv2d:N=1,C=960,H=7,W=7,K=320,R=1,S=1",
        "conv2d:N=1,C=64,H=56,W=56,K=128,R=1,S=1,stride=2", "conv2d:N=2,C=3,H=1,W=2,K=5,R=1,S=1"}) {
    Workload w = normalized(flat(), text);
    EXPECT_EQ(w.to_string(), normalized(direct(), text).to_string());
    EXPECT_EQ(flat().flop(w), direct().flop(w));
    EXPECT_EQ(flat().tvm_args(w), direct().tvm_args(w));
  }
  for (const auto& [text, word] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d:N=1,C=8,H=9,W=9,K=64,R=3,S=3,pad=1", "1x1"},
           {"conv2d:N=1,C=8,H=9,W=9,K=8,R=1,S=1,pad=1", "padding"},
           {"conv2d:N=1,C=8,H=1,W=1,K=8,R=1,S=1", "one pixel"},
           {"conv2d:N=1,C=8,H=9,W=9,K=8,R=1,S=1,groups=2", "groups"}}) {
    std::string m = normalize_error(flat(), text);
    EXPECT_NE(m.find(word), std::string::npos) << text << ": " << m;
    EXPECT_NE(m.find("conv2d_NCHWc_flat.x86"), std::string::npos) << m;
  }
  EXPECT_TRUE(flat().extra());
  EXPECT_EQ(find_template("conv2d_NCHWc_flat.x86"), &flat());
  Workload w = *Workload::parse("conv2d:N=1,C=8,H=9,W=9,K=40,R=1,S=1");
  EXPECT_EQ(*resolve_templates(w, ""), std::vector<const Template*>{&direct()});
}

TEST(Conv2dFlat, SpaceAndUntunedConfigsThatFitTheRegisters) {
  Workload w = normalized(flat(), "conv2d:N=1,C=960,H=7,W=7,K=320,R=1,S=1");
  ConfigSpace space = flat().space(w);
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_ic", "tile_oc", "tile_px"}));
  EXPECT_EQ(space.dims()[2], 16);
  Workload small = normalized(flat(), "conv2d:N=1,C=16,H=2,W=3,K=24,R=1,S=1");
  EXPECT_EQ(flat().space(small).dims()[2], 6);  // no more pixels than the output has

  for (const TargetInfo& target : {kTestAvx512, kTestAvx2, kTestNeon}) {
    for (const Workload& wl :
         {w, small, normalized(flat(), "conv2d:N=1,C=64,H=56,W=56,K=128,R=1,S=1,stride=2"),
          normalized(flat(), "conv2d:N=1,C=24,H=56,W=56,K=144,R=1,S=1")}) {
      ConfigSpace s = flat().space(wl);
      for (const ConfigEntity& c :
           {flat().default_config(wl, s, target), flat().fallback(wl, s, target)}) {
        EXPECT_EQ(s.get(c.index()), c) << wl.to_string();
        EXPECT_TRUE(flat().instantiate(wl, c, target).ok()) << c.entity_string();
      }
      // The default's blocks are conv2d_NCHWc.x86's, so that neighbours chain.
      ConfigEntity d = flat().default_config(wl, s, target);
      ConfigEntity dd = direct().default_config(wl, direct().space(wl), target);
      EXPECT_EQ(inner(d, "tile_ic"), inner(dd, "tile_ic"));
      EXPECT_EQ(inner(d, "tile_oc"), inner(dd, "tile_oc"));
      const int64_t vecs = (inner(d, "tile_oc") + target.simd_lanes - 1) / target.simd_lanes;
      EXPECT_LE(pixels_of(d) * vecs + vecs + 1, target.vector_registers)
          << wl.to_string() << " on " << target.simd_lanes << " lanes";
    }
  }
  // 7x7 on 16 AVX2 registers: 6 pixels of 2 vectors (12 FMA chains), where conv2d_NCHWc.x86's
  // default has 4 columns (8 chains, just the FMA latency's 2 x 4).
  ConfigEntity d = flat().default_config(w, space, kTestAvx2);
  EXPECT_EQ(pixels_of(d), 6);
  EXPECT_EQ(inner(d, "tile_oc"), 16);
  EXPECT_TRUE(flat().preferred_untuned(w, kTestAvx2));
}

// The interpreter computes the reference, with all stages and with the timed one alone, for every
// pixel count over outputs most counts do not divide, strides 1 and 2, batch 2.
TEST(Conv2dFlat, EveryPixelCountComputesTheReference) {
  uint64_t seed = 1;
  for (const char* text :
       {"conv2d:N=1,C=8,H=5,W=7,K=16,R=1,S=1", "conv2d:N=2,C=6,H=9,W=8,K=12,R=1,S=1,stride=2"}) {
    Workload w = normalized(flat(), text);
    const conv::Geometry g = conv::geometry(w);
    for (int64_t px = 1; px <= std::min<int64_t>(16, g.p * g.q); ++px) {
      ConfigEntity c = with(w, g.c == 8 ? 4 : 3, g.k == 16 ? 8 : 4, px);
      auto p = flat().instantiate(w, c, kTestAvx2);
      ASSERT_TRUE(p.ok()) << text << ": " << p.status().message();
      EXPECT_TRUE(ComputesReference(flat(), w, *p, seed++)) << text << " " << c.entity_string();
      for (const ir::Stage& s : p->stages) {
        if (s.timed) {
          EXPECT_TRUE(VectorLoopsAreSimd(s.body));  // the packing stages gather
        }
      }
    }
  }
}

TEST(Conv2dFlat, RefusesAPixelCountOutsideItsSpace) {
  Workload w = normalized(flat(), "conv2d:N=1,C=8,H=2,W=5,K=8,R=1,S=1");
  ConfigSpace space = flat().space(w);
  for (const char* bad :
       {R"([["tile_ic","sp",[-1,8]],["tile_oc","sp",[-1,8]],["tile_px","ot",0]])",
        R"([["tile_ic","sp",[-1,8]],["tile_oc","sp",[-1,8]],["tile_px","ot",11]])",
        R"([["tile_ic","sp",[-1,8]],["tile_oc","sp",[-1,8]],["tile_px","ot",true]])"}) {
    EXPECT_FALSE(space.from_json_entities(nlohmann::json::parse(bad)).ok()) << bad;
  }
  // A config of another space (a forged record) is refused by instantiate with a reason.
  Workload big = normalized(flat(), "conv2d:N=1,C=8,H=4,W=4,K=8,R=1,S=1");
  auto p = flat().instantiate(w, with(big, 8, 8, 16), kTestAvx512);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInstantiation);
  EXPECT_NE(p.status().message().find("tile_px"), std::string::npos) << p.status().message();
}

// As LLVM code for this host (measured layout: packed data and output), checked by the runner
// against the double-precision reference.
TEST(Conv2dFlat, BuiltForThisHostPixelTilesMatchTheReference) {
  ThreadPool pool(2);
  const Target target = builder::host_target();
  const int64_t lanes = target.simd_lanes();
  runner::MeasureOptions check;
  check.time.number = 1;
  check.time.repeat = 1;
  for (const char* text : {"conv2d:N=1,C=64,H=7,W=7,K=64,R=1,S=1",
                           "conv2d:N=1,C=32,H=14,W=14,K=48,R=1,S=1,stride=2"}) {
    Workload w = normalized(flat(), text);
    for (int64_t px : {5, 6, 13}) {
      const int64_t oc_bn = conv::geometry(w).k % (2 * lanes) == 0 ? 2 * lanes : lanes;
      ConfigEntity config = with(w, 16, oc_bn, px);
      MeasureResult m = runner::check_config(flat(), w, config, target, check, pool);
      EXPECT_EQ(m.error, MeasureError::kNoError) << text << " px=" << px << ": " << m.message;
      EXPECT_LE(m.relative_error, 1e-5) << text << " px=" << px;
    }
  }
}

}  // namespace
}  // namespace kiln::ops
