// The machine kiln runs on, detected without LLVM (cpuid on x86-64; /proc/cpuinfo and AT_HWCAP
// on aarch64),
// for processes that hold targets but generate no code: a device-side runner names its machine
// with it. The triple and the CPU name are LLVM's (sys::getProcessTriple, getHostCPUName) on
// the CPUs kiln supports: AMD Zen 1-5 and Intel Haswell to Granite Rapids, Cortex/Neoverse
// cores; another CPU is "generic". The features are the instruction sets kiln's code uses
// (kHostFeatureNames), each with the sign LLVM gives it, not LLVM's whole feature list:
// builder::host_target() stays the target kiln compiles for.
#pragma once

#include <string_view>
#include <vector>

#include "exchange/target.h"

namespace kiln {

Target host_target_without_llvm();

// The features host_target_without_llvm reports on this architecture, by LLVM's names.
const std::vector<std::string_view>& host_feature_names();

}  // namespace kiln
