// Turning target text into a Target (exchange/target.h) that this kiln can generate code for,
// and the host's target. These ask LLVM, so they live in the builder; the Target itself is plain
// data that processes without LLVM exchange.
#pragma once

#include <string_view>

#include "common/status.h"
#include "exchange/target.h"

namespace kiln::builder {

// Parses `llvm [-mtriple=T] [-mcpu=C] [-mattr=+a,-b]`; missing parts default to the host's
// (its triple, CPU name and CPU features; a CPU other than the host's implies that CPU's own
// features). Errors name the target text and the unknown option, triple, CPU or feature, and
// reject what LLVM cannot generate code for here.
Result<Target> parse_target(std::string_view text);
// The machine kiln runs on.
Target host_target();
// Whether code generated for `target` may run on this machine: the same architecture, and every
// CPU feature the target's CPU and -mattr enable is one the host has. The error names the
// architectures or the first missing feature. Compiling for a target is always allowed; this
// guards running its code here (constant stages at compile time, measurements), which would
// otherwise die with SIGILL.
Status runs_on_host(const Target& target);

}  // namespace kiln::builder
