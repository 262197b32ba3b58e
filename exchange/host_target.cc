#include "exchange/host_target.h"

#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace kiln {

namespace {

#if defined(__x86_64__)

struct CpuidBit {
  std::string_view feature;  // LLVM's name
  unsigned leaf, subleaf;
  int reg;  // 1 ebx, 2 ecx, 3 edx
  int bit;
  int xcr0;  // the OS state the feature needs: 0 none, 1 AVX (ymm), 2 AVX-512 (zmm, masks)
};

constexpr CpuidBit kX86Bits[] = {
    {"sse", 1, 0, 3, 25, 0},
    {"sse2", 1, 0, 3, 26, 0},
    {"sse3", 1, 0, 2, 0, 0},
    {"ssse3", 1, 0, 2, 9, 0},
    {"fma", 1, 0, 2, 12, 1},
    {"sse4.1", 1, 0, 2, 19, 0},
    {"sse4.2", 1, 0, 2, 20, 0},
    {"movbe", 1, 0, 2, 22, 0},
    {"popcnt", 1, 0, 2, 23, 0},
    {"avx", 1, 0, 2, 28, 1},
    {"f16c", 1, 0, 2, 29, 1},
    {"bmi", 7, 0, 1, 3, 0},
    {"avx2", 7, 0, 1, 5, 1},
    {"bmi2", 7, 0, 1, 8, 0},
    {"avx512f", 7, 0, 1, 16, 2},
    {"avx512dq", 7, 0, 1, 17, 2},
    {"avx512ifma", 7, 0, 1, 21, 2},
    {"avx512cd", 7, 0, 1, 28, 2},
    {"avx512bw", 7, 0, 1, 30, 2},
    {"avx512vl", 7, 0, 1, 31, 2},
    {"avx512vbmi", 7, 0, 2, 1, 2},
    {"avx512vbmi2", 7, 0, 2, 6, 2},
    {"avx512vnni", 7, 0, 2, 11, 2},
    {"avx512bitalg", 7, 0, 2, 12, 2},
    {"avx512vpopcntdq", 7, 0, 2, 14, 2},
    {"avx512bf16", 7, 1, 0, 5, 2},  // leaf 7.1 eax
};

bool cpuid(unsigned leaf, unsigned subleaf, unsigned regs[4]) {
  return __get_cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3]) != 0;
}

// Which register state the OS saves (XCR0), as LLVM requires before it reports AVX features.
void os_state(bool* ymm, bool* zmm) {
  unsigned r[4] = {};
  *ymm = *zmm = false;
  if (!cpuid(1, 0, r) || !(r[2] & (1u << 27))) return;  // no OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  *ymm = (lo & 0x6) == 0x6;
  *zmm = *ymm && (lo & 0xe0) == 0xe0;
}

bool has(const CpuidBit& b, bool ymm, bool zmm) {
  unsigned r[4] = {};
  unsigned max_leaf[4] = {};
  if (!cpuid(0, 0, max_leaf) || b.leaf > max_leaf[0] || !cpuid(b.leaf, b.subleaf, r)) return false;
  if ((b.xcr0 == 1 && !ymm) || (b.xcr0 == 2 && !zmm)) return false;
  return (r[b.reg] >> b.bit) & 1u;
}

std::string amd_cpu(unsigned family, unsigned model) {
  auto in = [&](unsigned lo, unsigned hi) { return model >= lo && model <= hi; };
  switch (family) {
    case 0x17:
      return in(0x30, 0x3f) || model == 0x47 || in(0x60, 0x7f) || in(0x84, 0x87) || in(0x90, 0xaf)
                 ? "znver2"
                 : "znver1";
    case 0x19:
      return in(0x10, 0x1f) || in(0x60, 0x7f) || in(0xa0, 0xaf) ? "znver4" : "znver3";
    case 0x1a:
      return "znver5";
    default:
      return "generic";
  }
}

std::string intel_cpu(unsigned family, unsigned model) {
  if (family != 6) return "generic";
  struct Model {
    unsigned model;
    const char* cpu;
  };
  static constexpr Model kModels[] = {
      {0x2a, "sandybridge"},     {0x2d, "sandybridge"},    {0x3a, "ivybridge"},
      {0x3e, "ivybridge"},       {0x3c, "haswell"},        {0x3f, "haswell"},
      {0x45, "haswell"},         {0x46, "haswell"},        {0x3d, "broadwell"},
      {0x47, "broadwell"},       {0x4f, "broadwell"},      {0x56, "broadwell"},
      {0x4e, "skylake"},         {0x5e, "skylake"},        {0x8e, "skylake"},
      {0x9e, "skylake"},         {0xa5, "skylake"},        {0xa6, "skylake"},
      {0x66, "cannonlake"},      {0x7d, "icelake-client"}, {0x7e, "icelake-client"},
      {0x6a, "icelake-server"},  {0x6c, "icelake-server"}, {0x8c, "tigerlake"},
      {0x8d, "tigerlake"},       {0xa7, "rocketlake"},     {0x97, "alderlake"},
      {0x9a, "alderlake"},       {0xb7, "raptorlake"},     {0xba, "raptorlake"},
      {0xbf, "raptorlake"},      {0xaa, "meteorlake"},     {0xac, "meteorlake"},
      {0x8f, "sapphirerapids"},  {0xcf, "emeraldrapids"},  {0xad, "graniterapids"},
      {0xae, "graniterapids-d"},
  };
  if (model == 0x55) {  // one model number for three generations: told apart by features
    const bool ymm = true, zmm = true;
    if (has({"avx512bf16", 7, 1, 0, 5, 0}, ymm, zmm)) return "cooperlake";
    if (has({"avx512vnni", 7, 0, 2, 11, 0}, ymm, zmm)) return "cascadelake";
    return "skylake-avx512";
  }
  for (const Model& m : kModels) {
    if (m.model == model) return m.cpu;
  }
  return "generic";
}

std::string x86_cpu() {
  unsigned r[4] = {};
  if (!cpuid(0, 0, r)) return "generic";
  const bool amd = r[1] == 0x68747541;    // "Auth"enticAMD
  const bool intel = r[1] == 0x756e6547;  // "Genu"ineIntel
  if (!cpuid(1, 0, r)) return "generic";
  unsigned family = (r[0] >> 8) & 0xf;
  unsigned model = (r[0] >> 4) & 0xf;
  if (family == 0xf || family == 6) model += ((r[0] >> 16) & 0xf) << 4;
  if (family == 0xf) family += (r[0] >> 20) & 0xff;
  if (amd) return amd_cpu(family, model);
  if (intel) return intel_cpu(family, model);
  return "generic";
}

#endif  // __x86_64__

#if defined(__aarch64__)

// The CPU name from "CPU implementer" and "CPU part" of the first core in /proc/cpuinfo; the
// features from the kernel's AT_HWCAP, which qemu-user also sets (its /proc/cpuinfo is the x86
// host's, so an emulated runner is "generic" with the emulator's features).
std::string aarch64_cpu(std::string* features) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  unsigned implementer = 0, part = 0;
  const bool asimd = (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
  auto value = [&](std::string_view key) -> std::string {
    if (!line.starts_with(key)) return {};
    size_t colon = line.find(':');
    return colon == std::string::npos ? std::string() : line.substr(colon + 1);
  };
  while (std::getline(in, line)) {
    if (std::string v = value("CPU implementer"); !v.empty() && !implementer) {
      implementer = std::stoul(v, nullptr, 0);
    } else if (std::string v = value("CPU part"); !v.empty() && !part) {
      part = std::stoul(v, nullptr, 0);
    }
  }
  *features = asimd ? "+neon" : "-neon";
  if (implementer != 0x41) return "generic";  // Arm's own cores
  struct Part {
    unsigned part;
    const char* cpu;
  };
  static constexpr Part kParts[] = {
      {0xd03, "cortex-a53"},  {0xd04, "cortex-a35"},  {0xd05, "cortex-a55"},  {0xd07, "cortex-a57"},
      {0xd08, "cortex-a72"},  {0xd09, "cortex-a73"},  {0xd0a, "cortex-a75"},  {0xd0b, "cortex-a76"},
      {0xd0c, "neoverse-n1"}, {0xd0d, "cortex-a77"},  {0xd40, "neoverse-v1"}, {0xd41, "cortex-a78"},
      {0xd49, "neoverse-n2"}, {0xd4f, "neoverse-v2"},
  };
  for (const Part& p : kParts) {
    if (p.part == part) return p.cpu;
  }
  return "generic";
}

#endif  // __aarch64__

}  // namespace

const std::vector<std::string_view>& host_feature_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
#if defined(__x86_64__)
    for (const CpuidBit& b : kX86Bits) out.push_back(b.feature);
#elif defined(__aarch64__)
    out.push_back("neon");
#endif
    return out;
  }();
  return names;
}

Target host_target_without_llvm() {
  Target t;
#if defined(__x86_64__) && defined(__linux__)
  t.triple = "x86_64-pc-linux-gnu";
  t.cpu = x86_cpu();
  bool ymm = false, zmm = false;
  os_state(&ymm, &zmm);
  for (const CpuidBit& b : kX86Bits) {
    if (!t.features.empty()) t.features += ",";
    t.features += (has(b, ymm, zmm) ? "+" : "-") + std::string(b.feature);
  }
#elif defined(__aarch64__) && defined(__linux__)
  t.triple = "aarch64-unknown-linux-gnu";
  t.cpu = aarch64_cpu(&t.features);
#else
  t.triple = "unknown-unknown-unknown";
  t.cpu = "generic";
#endif
  return t;
}

}  // namespace kiln
