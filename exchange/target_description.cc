#include "exchange/target_description.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>

#include "exchange/host_target.h"

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
    CpuIsa{"x86-64-v4", false, "avx512"},  // the psABI level: AVX-512 F, BW, CD, DQ, VL
    CpuIsa{"znver", true, "avx2"},
    CpuIsa{"haswell", false, "avx2"},
    CpuIsa{"x86-64-v3", false, "avx2"},  // AVX2, FMA
    CpuIsa{"broadwell", false, "avx2"},
    CpuIsa{"skylake", false, "avx2"},
};

// Per-core caches and FMA throughput of the CPUs kiln names (first match wins, as above): L1d,
// L2, FMAs per cycle of the widest vector the CPU has (Zen 4 splits a zmm FMA in two halves).
struct CpuModel {
  std::string_view cpu;
  bool prefix;
  int64_t l1d_kib, l2_kib;
  int fma_units;
};

constexpr std::array kCpuModels = {
    CpuModel{"znver1", false, 32, 512, 1},         CpuModel{"znver2", false, 32, 512, 2},
    CpuModel{"znver3", false, 32, 512, 2},         CpuModel{"znver4", false, 32, 1024, 1},
    CpuModel{"znver5", false, 48, 1024, 2},        CpuModel{"haswell", false, 32, 256, 2},
    CpuModel{"broadwell", false, 32, 256, 2},      CpuModel{"skylake-avx512", false, 32, 1024, 2},
    CpuModel{"cascadelake", false, 32, 1024, 2},   CpuModel{"cooperlake", false, 32, 1024, 2},
    CpuModel{"skylake", false, 32, 256, 2},        CpuModel{"icelake-server", false, 48, 1280, 2},
    CpuModel{"icelake-client", false, 48, 512, 1}, CpuModel{"tigerlake", false, 48, 1280, 1},
    CpuModel{"rocketlake", false, 48, 512, 1},     CpuModel{"sapphirerapids", false, 48, 2048, 2},
    CpuModel{"emeraldrapids", false, 48, 2048, 2}, CpuModel{"graniterapids", false, 48, 2048, 2},
    CpuModel{"neoverse-v", true, 64, 1024, 4},     CpuModel{"neoverse-n", true, 64, 1024, 2},
    CpuModel{"cortex-a7", true, 32, 512, 2},       CpuModel{"apple-", true, 128, 4096, 4},
};

const CpuModel* cpu_model(std::string_view cpu) {
  for (const CpuModel& m : kCpuModels) {
    if (m.prefix ? cpu.starts_with(m.cpu) : cpu == m.cpu) return &m;
  }
  return nullptr;
}

std::optional<std::string> read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// "32K", "1024K", "2M", "512" (bytes) -> bytes; 0 for anything else.
int64_t parse_size(const std::string& text) {
  size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  std::string_view unit = std::string_view(text).substr(used);
  if (unit.empty()) return n;
  if (unit == "K") return n * 1024;
  if (unit == "M") return n * 1024 * 1024;
  return 0;
}

// The host's caches are read once: describe() runs for every template instantiation.
const CacheSizes& host_caches(const CacheSizes& nominal) {
  static const CacheSizes caches = read_sysfs_caches("/sys/devices/system/cpu/cpu0/cache", nominal);
  return caches;
}

bool is_host_cpu(const Target& target, TargetArch arch) {
  static const Target host = host_target_without_llvm();
  static const TargetArch host_arch = arch_of_triple(host.triple);
  return !target.cpu.empty() && target.cpu == host.cpu && arch == host_arch;
}

TargetDescription row(const Target& target, TargetArch arch, std::string_view isa,
                      RegisterFile file, CacheSizes caches) {
  TargetDescription d{arch, isa, {file}, caches};
  d.unroll_registers = arch == TargetArch::kX86 ? 32 : file.count;
  if (const CpuModel* m = cpu_model(target.cpu)) {
    d.caches.l1d_bytes = m->l1d_kib * 1024;
    d.caches.l2_bytes = m->l2_kib * 1024;
    d.fma_units = m->fma_units;
  }
  if (is_host_cpu(target, arch)) d.caches = host_caches(d.caches);
  return d;
}

}  // namespace

std::string_view isa_of_cpu(std::string_view cpu) {
  for (const CpuIsa& c : kCpuIsas) {
    if (c.prefix ? cpu.starts_with(c.cpu) : cpu == c.cpu) return c.isa;
  }
  return {};
}

TargetArch arch_of_triple(std::string_view triple) {
  if (triple.starts_with("aarch64") || triple.starts_with("arm64")) return TargetArch::kAarch64;
  const bool x86 = triple.starts_with("x86_64") ||
                   (triple.size() > 4 && triple[0] == 'i' && triple.substr(2, 2) == "86");
  return x86 ? TargetArch::kX86 : TargetArch::kOther;
}

CacheSizes read_sysfs_caches(const std::string& dir, CacheSizes fallback) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) return fallback;
  CacheSizes out = fallback;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const std::filesystem::path p = it->path();
    if (!p.filename().string().starts_with("index")) continue;
    std::optional<std::string> level = read_line(p / "level"), type = read_line(p / "type");
    std::optional<std::string> size = read_line(p / "size");
    if (!level || !type || !size || *type == "Instruction") continue;
    const int64_t bytes = parse_size(*size);
    if (bytes <= 0) continue;
    if (*level == "1") out.l1d_bytes = bytes;
    if (*level == "2") out.l2_bytes = bytes;
    if (std::optional<std::string> line = read_line(p / "coherency_line_size")) {
      if (int64_t n = parse_size(*line); n > 0) out.line_bytes = n;
    }
  }
  return out;
}

ops::TargetInfo TargetDescription::template_info() const {
  ops::TargetInfo info;
  info.simd_lanes = simd_lanes();
  info.vector_registers = widest().count;
  info.fma_units = fma_units;
  info.fma_latency = fma_latency;
  info.l1d_bytes = caches.l1d_bytes;
  info.l2_bytes = caches.l2_bytes;
  return info;
}

TargetDescription describe(const Target& target) {
  const TargetArch arch = arch_of_triple(target.triple);
  if (arch == TargetArch::kAarch64) {
    return row(target, arch, "neon", {"v", 32, 128}, {64, 32 * 1024, 512 * 1024});
  }
  // By features (or CPU name) before the triple: a target without a triple (tests, hand-made
  // records) that names an AVX CPU keeps its x86 width.
  if (target.has_feature("avx512f")) {
    return row(target, arch, "avx512", {"zmm", 32, 512}, {64, 32 * 1024, 1024 * 1024});
  }
  if (target.has_feature("avx2")) {
    return row(target, arch, "avx2", {"ymm", 16, 256}, {64, 32 * 1024, 512 * 1024});
  }
  if (arch == TargetArch::kX86) {
    return row(target, arch, "sse", {"xmm", 16, 128}, {64, 32 * 1024, 256 * 1024});
  }
  return row(target, arch, "generic", {"vector", 32, 128}, {64, 32 * 1024, 256 * 1024});
}

}  // namespace kiln
