// Target strings between kiln and TVM v0.16 (autotvm.md §3).
//
// kiln writes `llvm -mcpu=C [-mattr=...] [-mtriple=...]` (builder/target.h). TVM's Target.str(),
// which is what autotvm logs hold, is `kind -keys=k1,k2 <attrs sorted by name>` and always puts a
// space after the keys, so plain "llvm" becomes "llvm -keys=cpu " (trailing space).
#pragma once

#include <string>
#include <string_view>

namespace kiln::store {

// kiln target -> TVM Target.str(). `llvm` and `c` get the key "cpu" (an explicit -keys= is kept);
// every other option is kept verbatim, sorted by name:
//   "llvm -mcpu=znver5"                  -> "llvm -keys=cpu -mcpu=znver5"
//   "llvm"                               -> "llvm -keys=cpu "
//   "llvm -mcpu=znver5 -mattr=+avx2,+fma" -> "llvm -keys=cpu -mattr=+avx2,+fma -mcpu=znver5"
std::string tvm_target_string(std::string_view kiln_target);

// TVM target string -> kiln target: drops -keys=, renames the obsolete -target= to -mtriple= (as
// AutoTVM's record decoder does), and orders the options as kiln writes them (-mcpu, -mattr,
// -mtriple, then any others by name):
//   "llvm -keys=cpu -mcpu=znver5" -> "llvm -mcpu=znver5";  "llvm -keys=cpu " -> "llvm".
std::string kiln_target_from_tvm(std::string_view tvm_target);

}  // namespace kiln::store
