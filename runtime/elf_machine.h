// Whether a shared object's bytes are code this machine can run, read from its ELF header, so
// that an artifact built for another architecture (a cross-compiled aarch64 kernel reaching an
// x86-64 runner, say) is refused with a clear message before the dynamic loader sees it.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln {

// The architecture an ELF file's header names ("x86_64", "aarch64", ..., or "ELF machine N"
// for one without a name here). kInvalidArgument when `bytes` does not start with an ELF header.
Result<std::string> elf_machine_name(std::string_view bytes);

// The architecture this process runs, as elf_machine_name names it.
std::string host_machine_name();

// Ok when `bytes` is a 64-bit little-endian ELF shared object of this machine's architecture;
// otherwise kRuntime naming `label`, the object's architecture and this machine's, e.g.
// "artifact 'x': code for aarch64; this machine runs x86_64". kInvalidArgument when its program
// headers, section headers or segments reach past the end of `bytes` (a truncated object, which
// the loader would map and fault on).
Status check_runs_here(std::string_view bytes, const std::string& label);

}  // namespace kiln
