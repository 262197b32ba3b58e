#include "exchange/target.h"

#include <vector>

namespace kiln {

std::string Target::to_string() const {
  std::string s = "llvm -mcpu=" + cpu;
  if (explicit_features) s += " -mattr=" + features;
  if (explicit_triple) s += " -mtriple=" + triple;
  return s;
}

bool Target::has_feature(std::string_view name) const {
  std::string needle = "+" + std::string(name);
  size_t pos = 0;
  while ((pos = features.find(needle, pos)) != std::string::npos) {
    size_t end = pos + needle.size();
    if (end == features.size() || features[end] == ',') return true;
    pos = end;
  }
  if (!features.empty()) return false;
  // No explicit features: judge by the CPU name.
  static const std::vector<std::string> avx512_cpus = {
      "znver4",     "znver5",         "skylake-avx512", "cascadelake",
      "cooperlake", "icelake-server", "icelake-client", "sapphirerapids",
      "tigerlake",  "rocketlake",     "emeraldrapids",  "graniterapids"};
  bool avx512 = false;
  for (const auto& c : avx512_cpus) avx512 |= cpu == c;
  if (name.rfind("avx512", 0) == 0) return avx512;
  if (name == "avx2" || name == "fma")
    return avx512 || cpu.rfind("znver", 0) == 0 || cpu == "haswell" || cpu == "x86-64-v3" ||
           cpu == "broadwell" || cpu == "skylake";
  return false;
}

int Target::simd_lanes() const {
  if (has_feature("avx512f")) return 16;
  if (has_feature("avx2")) return 8;
  return 4;
}

}  // namespace kiln
