// Analysis: ordered reductions. An unrolled loop that only accumulates consecutive elements
// into one scalar,
//   for v (unrolled): D[i] = D[i] + X[j + v]      (i free of v, X not D)
// is emitted as one vector load of X[j .. j + extent) and an ordered vector reduction starting
// from D[i]: without reassociation it performs the same additions in the same order, in a
// fraction of the LLVM IR (dense_nopack's kk reduction).
//
// This is an analysis rather than a rewrite because the IR has no node for a vector reduction
// (loop kinds are its only code-shape requests, ir/ir.h): the lowering pipeline (builder/lower.h)
// records the loops found here and the emitter emits exactly those as reductions. It runs on
// the loops the schedule unrolled, before unroll_register_locals adds loops of its own, which
// are emitted iteration by iteration.
#pragma once

#include <unordered_map>

#include "ir/ir.h"

namespace kiln::ir::passes {

struct OrderedReduction {
  Expr accumulator;  // the load D[i] the sum starts from (the store writes D[i])
  Expr addend;       // the load X[j + v], coefficient 1 in the loop variable
};

// Unrolled loops of extent 2..1024 under `stmt` that are ordered reductions, by loop node.
using OrderedReductions = std::unordered_map<const StmtNode*, OrderedReduction>;
OrderedReductions find_ordered_reductions(const Stmt& stmt);

}  // namespace kiln::ir::passes
