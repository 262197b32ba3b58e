// The target description (exchange/target_description.h): one row per ISA, its register files
// and width, and the CPU names that imply features. Linked without LLVM, like the exchange.
#include "exchange/target_description.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "exchange/host_target.h"
#include "tests/fixed_target.h"
#include "tests/temp_dir.h"

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

// ops::kWidestSimdLanes, which template spaces read (a space never depends on the target), is
// the widest vector of every ISA row.
TEST(TargetDescription, TheWidestVectorOfEveryIsaIsTheTemplatesBound) {
  int widest = 0;
  for (auto [triple, cpu] :
       std::vector<std::pair<const char*, const char*>>{{"x86_64-pc-linux-gnu", "znver5"},
                                                        {"x86_64-pc-linux-gnu", "sapphirerapids"},
                                                        {"x86_64-pc-linux-gnu", "znver3"},
                                                        {"x86_64-pc-linux-gnu", "x86-64"},
                                                        {"aarch64-linux-gnu", "neoverse-v1"},
                                                        {"riscv64-unknown-linux-gnu", "generic"}}) {
    const int lanes = describe(fixed_target(triple, cpu)).simd_lanes();
    EXPECT_LE(lanes, ops::kWidestSimdLanes) << cpu;
    widest = std::max(widest, lanes);
  }
  EXPECT_EQ(widest, ops::kWidestSimdLanes);
}

TEST(TargetDescription, CpuNamesImplyTheirIsa) {
  EXPECT_EQ(isa_of_cpu("znver5"), "avx512");
  EXPECT_EQ(isa_of_cpu("sapphirerapids"), "avx512");
  EXPECT_EQ(isa_of_cpu("znver2"), "avx2");  // every other Zen, by prefix
  EXPECT_EQ(isa_of_cpu("x86-64-v3"), "avx2");
  EXPECT_EQ(isa_of_cpu("x86-64-v4"), "avx512");  // a portable AVX-512 target, not 4-wide SSE
  EXPECT_EQ(fixed_target("x86_64-pc-linux-gnu", "x86-64-v4").simd_lanes(), 16);
  EXPECT_EQ(isa_of_cpu("x86-64-v2"), "");
  EXPECT_EQ(isa_of_cpu("cortex-a72"), "");
  EXPECT_TRUE(fixed_target("x86_64-pc-linux-gnu", "skylake").has_feature("fma"));
  EXPECT_FALSE(fixed_target("x86_64-pc-linux-gnu", "skylake").has_feature("avx512f"));
}

// What templates and default configs read of each target: register count and width, FMA
// throughput and caches, from the CPU's row when the CPU is not the host's.
TEST(TargetDescription, RegistersWidthsAndCachesOfEachCpu) {
  struct Expected {
    const char* triple;
    const char* cpu;
    int registers, lanes, fma_units;
    int64_t l1d_kib, l2_kib;
  };
  const Expected cases[] = {
      {"x86_64-pc-linux-gnu", "znver3", 16, 8, 2, 32, 512},
      {"x86_64-pc-linux-gnu", "znver5", 32, 16, 2, 48, 1024},
      {"x86_64-pc-linux-gnu", "skylake-avx512", 32, 16, 2, 32, 1024},
      {"x86_64-pc-linux-gnu", "x86-64-v3", 16, 8, 2, 32, 512},
      {"aarch64-linux-gnu", "generic", 32, 4, 2, 32, 512},
      {"aarch64-linux-gnu", "neoverse-n1", 32, 4, 2, 64, 1024},
  };
  const Target host = host_target_without_llvm();
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.cpu);
    ops::TargetInfo info = describe(fixed_target(e.triple, e.cpu)).template_info();
    EXPECT_EQ(info.vector_registers, e.registers);
    EXPECT_EQ(info.simd_lanes, e.lanes);
    EXPECT_EQ(info.fma_units, e.fma_units);
    if (host.cpu == e.cpu) continue;  // the host's caches are its own (below)
    EXPECT_EQ(info.l1d_bytes, e.l1d_kib * 1024);
    EXPECT_EQ(info.l2_bytes, e.l2_kib * 1024);
  }
  // Zen 4 issues one zmm FMA per cycle (two 256-bit halves), Zen 5 two.
  EXPECT_EQ(describe(fixed_target("x86_64-pc-linux-gnu", "znver4")).fma_units, 1);
}

TEST(TargetDescription, SysfsCachesAreParsed) {
  testing::TempDir tmp;
  const std::filesystem::path dir(tmp.path());
  auto write = [&](const std::string& index, const char* level, const char* type,
                   const char* size) {
    std::filesystem::create_directories(dir / index);
    std::ofstream(dir / index / "level") << level << "\n";
    std::ofstream(dir / index / "type") << type << "\n";
    std::ofstream(dir / index / "size") << size << "\n";
    std::ofstream(dir / index / "coherency_line_size") << "64\n";
  };
  write("index0", "1", "Data", "48K");
  write("index1", "1", "Instruction", "32K");
  write("index2", "2", "Unified", "2048K");
  write("index3", "3", "Unified", "32768K");
  CacheSizes nominal{64, 1, 2};
  CacheSizes got = read_sysfs_caches(dir.string(), nominal);
  EXPECT_EQ(got.l1d_bytes, 48 * 1024);
  EXPECT_EQ(got.l2_bytes, 2048 * 1024);
  EXPECT_EQ(got.line_bytes, 64);
  // Unreadable or missing: the nominal sizes stay.
  CacheSizes none = read_sysfs_caches((dir / "missing").string(), nominal);
  EXPECT_EQ(none.l1d_bytes, 1);
  EXPECT_EQ(none.l2_bytes, 2);
}

TEST(TargetDescription, TheHostsCachesComeFromSysfs) {
  const std::string sysfs = "/sys/devices/system/cpu/cpu0/cache";
  if (!std::filesystem::exists(sysfs)) GTEST_SKIP() << "no " << sysfs;
  const Target host = host_target_without_llvm();
  CacheSizes expected = read_sysfs_caches(sysfs, {});
  TargetDescription d = describe(host);
  EXPECT_EQ(d.caches.l1d_bytes, expected.l1d_bytes);
  EXPECT_EQ(d.caches.l2_bytes, expected.l2_bytes);
}

}  // namespace
}  // namespace kiln
