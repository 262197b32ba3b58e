#include "builder/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <sstream>
#include <vector>

namespace kiln::builder {

namespace {

std::string host_features() {
  std::string out;
  for (const auto& f : llvm::sys::getHostCPUFeatures()) {
    if (!out.empty()) out += ",";
    out += (f.second ? "+" : "-") + f.first().str();
  }
  return out;
}

}  // namespace

Target Target::host() {
  Target t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  t.features = host_features();
  return t;
}

Result<Target> Target::parse(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string word;
  if (!(in >> word) || word != "llvm") {
    return InvalidArgument("target '" + std::string(text) + "': must start with 'llvm'");
  }
  Target t = host();
  bool cpu_given = false;
  while (in >> word) {
    auto value_of = [&](std::string_view prefix) { return word.substr(prefix.size()); };
    if (word.rfind("-mcpu=", 0) == 0) {
      t.cpu = value_of("-mcpu=");
      cpu_given = true;
    } else if (word.rfind("-mattr=", 0) == 0) {
      t.features = value_of("-mattr=");
      t.explicit_features = true;
    } else if (word.rfind("-mtriple=", 0) == 0) {
      t.triple = value_of("-mtriple=");
    } else if (word.rfind("-keys=", 0) == 0 || word.rfind("-model=", 0) == 0) {
      // TVM target attributes without meaning for code generation.
    } else {
      return InvalidArgument("target '" + std::string(text) + "': unknown option '" + word +
                             "' (expected -mcpu=, -mattr=, -mtriple=)");
    }
  }
  // A CPU other than the host's implies that CPU's own features, not the host's.
  if (cpu_given && !t.explicit_features && t.cpu != llvm::sys::getHostCPUName()) t.features.clear();
  return t;
}

std::string Target::to_string() const {
  std::string s = "llvm -mcpu=" + cpu;
  if (explicit_features) s += " -mattr=" + features;
  if (triple != llvm::sys::getProcessTriple()) s += " -mtriple=" + triple;
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

}  // namespace kiln::builder
