#include "builder/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "builder/llvm_init.h"
#include "runtime/model_artifact.h"

namespace kiln::builder {

namespace {

// Checks that LLVM can generate code for `t` in this build, so that no bad target string
// reaches LLVM's code generator (which aborts on some of them, e.g. 64-bit code for i386).
Status validate(const Target& t, std::string_view text) {
  initialize_llvm();
  std::string where = "target '" + std::string(text) + "': ";
  std::string error;
  const llvm::Target* backend = llvm::TargetRegistry::lookupTarget(t.triple, error);
  if (!backend) {
    return InvalidArgument(where + "triple '" + t.triple + "' is not supported by this kiln (" +
                           "it generates code for " + llvm::sys::getProcessTriple() + ")");
  }
  // The generic subtarget knows the valid CPU names and features without warning about ours.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(backend->createMCSubtargetInfo(t.triple, "", ""));
  if (!generic) return InvalidArgument(where + "no subtarget information for " + t.triple);
  if (!generic->isCPUStringValid(t.cpu)) {
    return InvalidArgument(where + "unknown CPU '" + t.cpu + "' for " + t.triple +
                           " (e.g. -mcpu=" + llvm::sys::getHostCPUName().str() +
                           ", x86-64-v3, znver4, skylake-avx512)");
  }
  auto known = generic->getAllProcessorFeatures();
  // The host's own features come from LLVM; only the user's -mattr needs checking.
  std::string_view rest = t.explicit_features ? std::string_view(t.features) : std::string_view{};
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.size() < 2 || (item[0] != '+' && item[0] != '-')) {
      return InvalidArgument(where + "feature '" + std::string(item) +
                             "' must be written +name or -name");
    }
    std::string_view name = item.substr(1);
    bool found = std::any_of(known.begin(), known.end(),
                             [&](const llvm::SubtargetFeatureKV& f) { return name == f.Key; });
    if (!found) {
      return InvalidArgument(where + "unknown CPU feature '" + std::string(name) + "' for " +
                             t.triple);
    }
  }
  llvm::Triple triple(t.triple);
  if (triple.getArch() == llvm::Triple::x86_64) {
    std::unique_ptr<llvm::MCSubtargetInfo> sub(
        backend->createMCSubtargetInfo(t.triple, t.cpu, t.features));
    if (!sub || !sub->checkFeatures("+64bit")) {
      return InvalidArgument(where + "CPU '" + t.cpu + "' cannot run 64-bit code (" + t.triple +
                             ")");
    }
  }
  return Status::Ok();
}

std::string host_features() {
  std::string out;
  for (const auto& f : llvm::sys::getHostCPUFeatures()) {
    if (!out.empty()) out += ",";
    out += (f.second ? "+" : "-") + f.first().str();
  }
  return out;
}

}  // namespace

Target host_target() {
  Target t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  t.features = host_features();
  return t;
}

Status runs_on_host(const Target& target) {
  initialize_llvm();
  const Target host = host_target();
  auto arch = [](const std::string& triple) { return triple.substr(0, triple.find('-')); };
  const std::string where = "target '" + target.to_string() + "': ";
  if (arch(target.triple) != arch(host.triple)) {
    return InvalidArgument(where + "code for " + arch(target.triple) + "; this machine runs " +
                           arch(host.triple));
  }
  std::string error;
  const llvm::Target* backend = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!backend) return InvalidArgument(where + error);
  std::unique_ptr<llvm::MCSubtargetInfo> want(
      backend->createMCSubtargetInfo(target.triple, target.cpu, target.features));
  if (!want) return InvalidArgument(where + "no subtarget information");
  // The features LLVM detects on the host are the instruction sets; a CPU's tuning features
  // (also "features" to LLVM) say nothing of what runs. Of those, only the ones code generation
  // emits from kiln's kernels matter: a Zen 3 target names pku, mwaitx or wbnoinvd, which some
  // Zen 4 hosts (VMs) hide, yet no generated kernel holds those system instructions.
  auto emitted_in_kernels = [](const std::string& name) {
    const std::vector<std::string>& isa = checkable_cpu_features();
    return std::find(isa.begin(), isa.end(), name) != isa.end() || name.starts_with("avx") ||
           name.starts_with("amx") || name.starts_with("sse") || name == "fma4" || name == "xop";
  };
  for (const auto& f : llvm::sys::getHostCPUFeatures()) {
    const std::string name = f.first().str();
    if (!f.second && emitted_in_kernels(name) && want->checkFeatures("+" + name)) {
      return InvalidArgument(where + "needs CPU feature '" + name + "', which this machine (" +
                             host.cpu + ") lacks");
    }
  }
  return Status::Ok();
}

Result<Target> parse_target(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string word;
  if (!(in >> word) || word != "llvm") {
    return InvalidArgument("target '" + std::string(text) + "': must start with 'llvm'");
  }
  Target t = host_target();
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
      t.explicit_triple = t.triple != llvm::sys::getProcessTriple();
    } else if (word.rfind("-keys=", 0) == 0 || word.rfind("-model=", 0) == 0) {
      // TVM target attributes without meaning for code generation.
    } else {
      return InvalidArgument("target '" + std::string(text) + "': unknown option '" + word +
                             "' (expected -mcpu=, -mattr=, -mtriple=)");
    }
  }
  // Another machine's triple without -mcpu means that architecture's generic CPU.
  if (t.explicit_triple && !cpu_given) t.cpu = "generic";
  // A CPU other than the host's implies that CPU's own features, not the host's.
  if ((cpu_given || t.explicit_triple) && !t.explicit_features &&
      t.cpu != llvm::sys::getHostCPUName()) {
    t.features.clear();
  }
  KILN_RETURN_IF_ERROR(validate(t, text));
  return t;
}

}  // namespace kiln::builder
