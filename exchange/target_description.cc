#include "exchange/target_description.h"

#include <array>

namespace kiln {

namespace {

struct CpuIsa {
  std::string_view cpu;
  bool prefix;  // matches every CPU name starting with `cpu`
  std::string_view isa;
};

// CPUs whose features are implied by name when a target gives none (first match wins, so the
// AVX-512 Zen generations precede the "znver" prefix).
constexpr std::array kCpuIsas = {
    CpuIsa{"znver4", false, "avx512"},
    CpuIsa{"znver5", false, "avx512"},
    CpuIsa{"skylake-avx512", false, "avx512"},
    CpuIsa{"cascadelake", false, "avx512"},
    CpuIsa{"cooperlake", false, "avx512"},
    CpuIsa{"icelake-server", false, "avx512"},
    CpuIsa{"icelake-client", false, "avx512"},
    CpuIsa{"sapphirerapids", false, "avx512"},
    CpuIsa{"tigerlake", false, "avx512"},
    CpuIsa{"rocketlake", false, "avx512"},
    CpuIsa{"emeraldrapids", false, "avx512"},
    CpuIsa{"graniterapids", false, "avx512"},
    CpuIsa{"znver", true, "avx2"},
    CpuIsa{"haswell", false, "avx2"},
    CpuIsa{"x86-64-v3", false, "avx2"},
    CpuIsa{"broadwell", false, "avx2"},
    CpuIsa{"skylake", false, "avx2"},
};

TargetDescription row(TargetArch arch, std::string_view isa, RegisterFile file, CacheSizes caches) {
  return TargetDescription{arch, isa, {file}, caches};
}

}  // namespace

std::string_view isa_of_cpu(std::string_view cpu) {
  for (const CpuIsa& c : kCpuIsas) {
    if (c.prefix ? cpu.starts_with(c.cpu) : cpu == c.cpu) return c.isa;
  }
  return {};
}

TargetDescription describe(const Target& target) {
  const std::string_view triple = target.triple;
  if (triple.starts_with("aarch64") || triple.starts_with("arm64")) {
    return row(TargetArch::kAarch64, "neon", {"v", 32, 128}, {64, 32 * 1024, 512 * 1024});
  }
  const bool x86 = triple.starts_with("x86_64") ||
                   (triple.size() > 4 && triple[0] == 'i' && triple.substr(2, 2) == "86");
  const TargetArch arch = x86 ? TargetArch::kX86 : TargetArch::kOther;
  // By features (or CPU name) before the triple: a target without a triple (tests, hand-made
  // records) that names an AVX CPU keeps its x86 width.
  if (target.has_feature("avx512f")) {
    return row(arch, "avx512", {"zmm", 32, 512}, {64, 32 * 1024, 1024 * 1024});
  }
  if (target.has_feature("avx2")) {
    return row(arch, "avx2", {"ymm", 16, 256}, {64, 32 * 1024, 512 * 1024});
  }
  if (arch == TargetArch::kX86) {
    return row(arch, "sse", {"xmm", 16, 128}, {64, 32 * 1024, 256 * 1024});
  }
  return row(arch, "generic", {"vector", 32, 128}, {64, 32 * 1024, 256 * 1024});
}

}  // namespace kiln
