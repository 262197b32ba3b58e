#include "bench/bench_machine.h"

#include <fstream>

#include "builder/target.h"
#include "exchange/host_target.h"

namespace kiln::bench {

std::string isa_name(const Target& target) {
  if (!target.triple.starts_with("x86_64")) return target.cpu;
  if (target.has_feature("avx512f")) return "AVX-512";
  if (target.has_feature("avx2")) return "AVX2";
  return "SSE";
}

std::string onednn_isa(const Target& target) {
  if (target.has_feature("avx512f")) return "AVX512_CORE";
  if (target.has_feature("avx2")) return "AVX2";
  return "SSE41";
}

std::string machine_text() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  Target host = host_target_without_llvm();
  return model + " (" + host.cpu + "), ISA " + isa_name(host);
}

Result<Target> bench_target(const std::string& text) {
  if (text.empty()) return builder::host_target();
  Result<Target> target = builder::parse_target(text);
  if (!target.ok()) return InvalidArgument("--target: " + target.status().message());
  if (Status s = builder::runs_on_host(*target); !s.ok()) {
    return InvalidArgument("--target '" + text + "': this machine (" + machine_text() +
                           ") cannot run its code: " + s.message());
  }
  return target;
}

}  // namespace kiln::bench
