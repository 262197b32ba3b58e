// The builder's single-config path: a Program -> a loadable shared object, timed per phase.
// (Pools of builder processes sit on top of this.)
#pragma once

#include <string>

#include "builder/codegen_llvm.h"
#include "builder/target.h"
#include "common/status.h"
#include "ir/ir.h"

namespace kiln::builder {

struct BuildOutput {
  std::string shared_object;  // ELF .so bytes, loadable with runtime::Artifact::load_from_bytes
  CompileTimings timings;
  double link_ms = 0;
  double total_ms = 0;
};

// Compiles and links `program` for `target`. Errors are kCompile (LLVM or lld failed, or IR the
// code generator rejects) or kInternal (kiln produced invalid LLVM IR).
Result<BuildOutput> build_program(const ir::Program& program, const Target& target);

}  // namespace kiln::builder
