// check_cpu_features (runtime/model_artifact.h): may this machine run a compiled model?
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/model_artifact.h"

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace kiln {
namespace {

struct Feature {
  const char* name;  // as LLVM spells it in -mattr, and as __builtin_cpu_supports spells it
  bool supported;
};

// __builtin_cpu_supports takes only a string literal, hence one entry per feature.
#define KILN_FEATURE(name) \
  { name, static_cast<bool>(__builtin_cpu_supports(name)) }

std::vector<Feature> HostFeatures() {
#if defined(__x86_64__)
  __builtin_cpu_init();  // needed when called before static constructors have run
  return {
      KILN_FEATURE("sse"),
      KILN_FEATURE("sse2"),
      KILN_FEATURE("sse3"),
      KILN_FEATURE("ssse3"),
      KILN_FEATURE("sse4.1"),
      KILN_FEATURE("sse4.2"),
      KILN_FEATURE("popcnt"),
      KILN_FEATURE("avx"),
      KILN_FEATURE("avx2"),
      KILN_FEATURE("fma"),
      KILN_FEATURE("f16c"),
      KILN_FEATURE("bmi"),
      KILN_FEATURE("bmi2"),
      KILN_FEATURE("lzcnt"),
      KILN_FEATURE("movbe"),
      KILN_FEATURE("aes"),
      KILN_FEATURE("pclmul"),
      KILN_FEATURE("avx512f"),
      KILN_FEATURE("avx512dq"),
      KILN_FEATURE("avx512cd"),
      KILN_FEATURE("avx512bw"),
      KILN_FEATURE("avx512vl"),
      KILN_FEATURE("avx512vnni"),
      KILN_FEATURE("avx512bf16"),
      KILN_FEATURE("avx512ifma"),
      KILN_FEATURE("avx512vbmi"),
      KILN_FEATURE("avx512vbmi2"),
      KILN_FEATURE("avx512bitalg"),
      KILN_FEATURE("avx512vpopcntdq"),
      KILN_FEATURE("avx512fp16"),
      KILN_FEATURE("gfni"),
      KILN_FEATURE("vpclmulqdq"),
      KILN_FEATURE("avxvnni"),
  };
#elif defined(__aarch64__)
  // LLVM's names of what the kernel reports in AT_HWCAP.
  const unsigned long hwcap = getauxval(AT_HWCAP);
  return {
      {"neon", (hwcap & HWCAP_ASIMD) != 0},       {"fp-armv8", (hwcap & HWCAP_FP) != 0},
      {"fullfp16", (hwcap & HWCAP_ASIMDHP) != 0}, {"dotprod", (hwcap & HWCAP_ASIMDDP) != 0},
      {"sve", (hwcap & HWCAP_SVE) != 0},
  };
#else
  return {};  // another host: every target is foreign (checked below)
#endif
}

#undef KILN_FEATURE

const std::vector<Feature>& Host() {
  static const std::vector<Feature> features = HostFeatures();
  return features;
}

// The triple named by `-mtriple=` in a target string, or "" when the target is the host's.
std::string TargetTriple(const std::string& target) {
  const std::string key = "-mtriple=";
  const size_t at = target.find(key);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size();
  return target.substr(begin, target.find(' ', begin) - begin);
}

}  // namespace

const std::vector<std::string>& checkable_cpu_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Feature& f : Host()) out.push_back(f.name);
    return out;
  }();
  return names;
}

Status check_cpu_features(const std::vector<std::string>& features, const std::string& target) {
  const std::string triple = TargetTriple(target);
#if defined(__x86_64__)
  const char* host = "x86_64";
#elif defined(__aarch64__)
  const char* host = "aarch64";
#else
  const char* host = nullptr;
#endif
  // No -mtriple: the compiling machine's own, which only the ELF header can tell (the executor
  // checks it before loading).
  if (host == nullptr || (!triple.empty() && !triple.starts_with(host))) {
    return InvalidArgument("compiled for a foreign target ('" + target + "'): this kiln runs " +
                           (host ? std::string(host) + " code only" : std::string("no code")) +
                           " on this host");
  }
  for (const std::string& name : features) {
    auto it = std::find_if(Host().begin(), Host().end(),
                           [&](const Feature& f) { return name == f.name; });
    if (it == Host().end()) {
      return InvalidArgument("needs CPU feature '" + name +
                             "', which is unknown to this kiln (target '" + target + "')");
    }
    if (!it->supported) {
      return InvalidArgument("needs CPU feature '" + name + "', which this CPU lacks (target '" +
                             target + "')");
    }
  }
  return Status::Ok();
}

}  // namespace kiln
