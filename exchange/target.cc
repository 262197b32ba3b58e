#include "exchange/target.h"

#include "exchange/target_description.h"

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
  const std::string_view isa = isa_of_cpu(cpu);
  if (name.rfind("avx512", 0) == 0) return isa == "avx512";
  if (name == "avx2" || name == "fma") return isa == "avx512" || isa == "avx2";
  return false;
}

int Target::simd_lanes() const { return describe(*this).simd_lanes(); }

}  // namespace kiln
