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

}  // namespace kiln::builder
