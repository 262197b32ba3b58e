// Target strings between kiln and TVM v0.16 (autotvm.md §3), and which targets a template fits.
//
// kiln writes `llvm -mcpu=C [-mattr=...] [-mtriple=...]` (builder/target.h). TVM's Target.str(),
// which is what autotvm logs hold, is `kind -keys=k1,k2 <attrs sorted by name>`. TVM writes the
// attributes after a ' ' that it emits whenever the kind has keys, even when there are no
// attributes (src/target/target.cc, TargetNode::str: `os << ' ' << JoinString(attrs)`), so a
// target without attributes ends in a space: "llvm -keys=cpu ". That space is part of TVM's
// text (the real TVM 0.10 log line of autotvm.md §3 has it) and is reproduced, never trimmed.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln::store {

// kiln target -> TVM Target.str(). `llvm` and `c` get TVM's default key "cpu" unless the target
// names its own -keys= (TVM then keeps the given keys as they are); every other option is kept
// verbatim, sorted by name:
//   "llvm"                                -> "llvm -keys=cpu "   (TVM's trailing space)
//   "llvm -keys=cpu"                      -> "llvm -keys=cpu "   (the same target)
//   "llvm -mcpu=znver5"                   -> "llvm -keys=cpu -mcpu=znver5"
//   "llvm -mcpu=znver5 -mattr=+avx2,+fma" -> "llvm -keys=cpu -mattr=+avx2,+fma -mcpu=znver5"
//   "llvm -keys=x86,cpu -mcpu=znver5"     -> "llvm -keys=x86,cpu -mcpu=znver5"
std::string tvm_target_string(std::string_view kiln_target);

// TVM target string -> kiln target: drops -keys= when it holds only the kind's default keys
// (kiln writes none; other keys are kept so that the target exports back to the same text),
// renames the obsolete -target= to -mtriple= (as AutoTVM's record decoder does), and orders the
// options as kiln writes them (-mcpu, -mattr, -mtriple, then any others by name):
//   "llvm -keys=cpu -mcpu=znver5" -> "llvm -mcpu=znver5";  "llvm -keys=cpu " -> "llvm".
std::string kiln_target_from_tvm(std::string_view tvm_target);

// Whether records of `task_name` can have been measured on `kiln_target`: TVM's "*.x86"
// templates are registered for llvm targets only (a cuda or opencl target runs other templates),
// and every option must be written `-name=value`. The error names the target, the task and why.
Status check_target_for_task(std::string_view kiln_target, std::string_view task_name);

}  // namespace kiln::store
