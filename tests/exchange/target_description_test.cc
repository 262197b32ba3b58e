// The target description (exchange/target_description.h): one row per ISA, its register files
// and width, and the CPU names that imply features. Linked without LLVM, like the exchange.
#include "exchange/target_description.h"

#include <gtest/gtest.h>

#include "tests/fixed_target.h"

namespace kiln {
namespace {

using testing::fixed_target;

TEST(TargetDescription, EachIsaHasItsOwnRegisterFile) {
  TargetDescription avx512 = describe(fixed_target("x86_64-pc-linux-gnu", "znver4"));
  EXPECT_EQ(avx512.arch, TargetArch::kX86);
  EXPECT_EQ(avx512.isa, "avx512");
  EXPECT_EQ(avx512.widest().name, "zmm");
  EXPECT_EQ(avx512.widest().count, 32);
  EXPECT_EQ(avx512.widest().bits, 512);
  EXPECT_EQ(avx512.simd_lanes(), 16);

  TargetDescription avx2 = describe(fixed_target("x86_64-pc-linux-gnu", "znver3"));
  EXPECT_EQ(avx2.isa, "avx2");
  EXPECT_EQ(avx2.widest().name, "ymm");
  EXPECT_EQ(avx2.widest().count, 16);
  EXPECT_EQ(avx2.simd_lanes(), 8);

  TargetDescription sse = describe(fixed_target("x86_64-pc-linux-gnu", "x86-64"));
  EXPECT_EQ(sse.isa, "sse");
  EXPECT_EQ(sse.widest().count, 16);
  EXPECT_EQ(sse.simd_lanes(), 4);

  TargetDescription neon = describe(fixed_target("aarch64-linux-gnu", "cortex-a72"));
  EXPECT_EQ(neon.arch, TargetArch::kAarch64);
  EXPECT_EQ(neon.isa, "neon");
  EXPECT_EQ(neon.widest().count, 32);
  EXPECT_EQ(neon.widest().bits, 128);
  EXPECT_EQ(neon.simd_lanes(), 4);
  EXPECT_GT(neon.caches.l1d_bytes, 0);

  EXPECT_EQ(describe(fixed_target("riscv64-unknown-linux-gnu", "generic")).isa, "generic");
  EXPECT_EQ(describe(fixed_target("i686-pc-linux-gnu", "pentium4")).arch, TargetArch::kX86);
}

TEST(TargetDescription, ExplicitFeaturesDecideTheIsaOverTheCpuName) {
  EXPECT_EQ(describe(fixed_target("x86_64-pc-linux-gnu", "znver4", "+avx2,+fma")).isa, "avx2");
  EXPECT_EQ(describe(fixed_target("x86_64-pc-linux-gnu", "x86-64", "+avx512f,+avx2")).isa,
            "avx512");
  // The features are the target's own: an aarch64 target is NEON whatever its CPU is called.
  EXPECT_EQ(describe(fixed_target("aarch64-linux-gnu", "generic", "+neon")).isa, "neon");
}

TEST(TargetDescription, TemplatesAndTargetSeeTheSameWidth) {
  for (const char* cpu : {"znver4", "znver3", "haswell", "x86-64", "skylake-avx512"}) {
    Target t = fixed_target("x86_64-pc-linux-gnu", cpu);
    EXPECT_EQ(describe(t).template_info().simd_lanes, t.simd_lanes()) << cpu;
  }
}

TEST(TargetDescription, CpuNamesImplyTheirIsa) {
  EXPECT_EQ(isa_of_cpu("znver5"), "avx512");
  EXPECT_EQ(isa_of_cpu("sapphirerapids"), "avx512");
  EXPECT_EQ(isa_of_cpu("znver2"), "avx2");  // every other Zen, by prefix
  EXPECT_EQ(isa_of_cpu("x86-64-v3"), "avx2");
  EXPECT_EQ(isa_of_cpu("cortex-a72"), "");
  EXPECT_TRUE(fixed_target("x86_64-pc-linux-gnu", "skylake").has_feature("fma"));
  EXPECT_FALSE(fixed_target("x86_64-pc-linux-gnu", "skylake").has_feature("avx512f"));
}

}  // namespace
}  // namespace kiln
