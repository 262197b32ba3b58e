// Analysis: vectorization legality. A vectorized loop is emitted as one SIMD body with its
// variable as lanes only where that gives the serial loop's result: a straight-line body (stores
// and sequences, no loops or guards) of extent at most 64, in which every stored buffer is
// written at lane-distinct addresses (a non-zero coefficient in the variable) and always at the
// same index, is read back only at the very index it is written, and no store index reads memory.
// Any other vectorized loop stays a scalar loop (with LLVM's vectorizer hint).
//
// An analysis rather than a rewrite: the decision is the emitter's code shape for a loop whose
// kind stays kVectorized either way (the IR has no "serial, vectorizer hint" kind). The lowering
// pipeline (builder/lower.h) records the loops found here; the emitter emits exactly those as
// SIMD bodies.
#pragma once

#include <unordered_set>

#include "ir/ir.h"

namespace kiln::ir::passes {

// Vectorized loops of extent > 1 under `stmt` that may be emitted as SIMD bodies.
using SimdLoops = std::unordered_set<const StmtNode*>;
SimdLoops find_simd_loops(const Stmt& stmt);

// Whether one vectorized loop may be emitted as a SIMD body (the rule above).
bool simd_safe(const Stmt& loop);

}  // namespace kiln::ir::passes
