// Pass: SIMD bodies in whole target vectors. A vectorized loop the emitter makes one SIMD body
// of (simd_safe) becomes one vector of its extent's lanes in LLVM (<48 x float>); where that
// width is neither a power of two nor at most one target vector, LLVM's type legalization widens
// it to the next power of two and shuffles it through the stack (measured on Zen 4: a 48-lane
// dense_pack tile ran at 17 GFLOPS, its 24 accumulators spilled, where 32 lanes ran at 116).
// Such a loop becomes a sequence of SIMD bodies of `simd_lanes` lanes and a narrower tail, each
// over its own lanes of the same body: every lane computes what it did, in the same order.
// Powers of two (16, 32, 64 lanes on AVX-512) legalize into whole registers and stay as they are.
#pragma once

#include "ir/ir.h"

namespace kiln::ir::passes {

// `stmt` with every simd_safe vectorized loop of extent E > simd_lanes, E not a power of two,
// split into E / simd_lanes loops of simd_lanes lanes and one of E % simd_lanes (when not 0),
// their variables named <var>_0, <var>_1, ... REQUIRES: simd_lanes >= 1.
Stmt split_wide_simd(const Stmt& stmt, int simd_lanes);

}  // namespace kiln::ir::passes
