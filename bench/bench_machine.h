// What a benchmark says about the machine it ran on and the instruction set it measured, and
// the target it is asked to generate code for (--target, e.g. 'llvm -mcpu=znver3' on an
// AVX-512 machine to measure AVX2 code there).
#pragma once

#include <string>

#include "common/status.h"
#include "exchange/target.h"

namespace kiln::bench {

// "AVX-512", "AVX2" or "SSE" (x86), else the CPU name: the widest vector ISA the features give.
std::string isa_name(const Target& target);
// oneDNN's name of that ISA for ONEDNN_MAX_CPU_ISA ("AVX512_CORE", "AVX2", "SSE41").
std::string onednn_isa(const Target& target);
// "AMD EPYC 9R14 96-Core Processor (znver4), ISA AVX-512": /proc/cpuinfo's model name, and the
// CPU and ISA exchange/host_target detects.
std::string machine_text();
// The target to benchmark: the host's when `text` is empty, else `text` parsed; an error when
// this machine cannot run its code (builder::runs_on_host), naming the target and why.
Result<Target> bench_target(const std::string& text);

}  // namespace kiln::bench
