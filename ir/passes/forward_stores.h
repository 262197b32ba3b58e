// Pass: store forwarding and dead stores. The templates' write-backs and the expanded loops
// (expand_unrolled.h) are full of scalar stores that are read back or overwritten at once
// (C[i] = 0, then C[i] = C[i] + ...). Left to LLVM, dead-store elimination over hundreds of them
// dominated the optimizer's time, so before emission:
//  - a scalar load of an element stored earlier becomes the stored value: a stored expression
//    is named by a Let (its variable is stored, and what later loads read), a constant or
//    variable is used as it is;
//  - a scalar store overwritten before anything reads its buffer is dropped.
// Both act within a region the emitter makes one basic block: the statements between the loops
// emitted as loops and the guards (a serial, parallel or scalar vectorized loop, or an If, ends
// a region; its body is regions of its own), with the SIMD bodies and allocations in it. What
// the pass knows of a buffer is forgotten at any other store to it, since two index expressions
// that differ may still address one element; what it knows about values named inside an
// allocation's scope ends with the scope. Vector accesses in SIMD bodies read (or forget) their
// whole buffer; an ordered reduction reads its accumulator from memory, as its body says.
// Runs after simd_legality, whose SIMD bodies it needs to know; the loops it
// rewrites are mapped to their new nodes in the result.
#pragma once

#include "ir/ir.h"
#include "ir/passes/ordered_reduction.h"
#include "ir/passes/simd_legality.h"

namespace kiln::ir::passes {

struct ForwardedStmt {
  Stmt body;
  SimdLoops simd_loops;                  // the SIMD bodies, as nodes of `body`
  OrderedReductions ordered_reductions;  // the reductions, as nodes of `body`
};

// `stmt` (expanded: no unrolled loops but ordered reductions) with its stores forwarded and its
// dead stores dropped; `simd_loops` and `reductions` are the analyses' results for `stmt`.
ForwardedStmt forward_stores(const Stmt& stmt, const SimdLoops& simd_loops,
                             const OrderedReductions& reductions);

}  // namespace kiln::ir::passes
