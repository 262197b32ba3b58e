// Pass: expansion of unrolled loops. Every loop the schedule or unroll_register_locals unrolled,
// and every loop of extent 0 or 1 whatever its kind, is replaced by copies of its body, one per
// iteration, with the loop variable a constant (the constructors fold what that makes constant).
// Sequences within sequences are flattened, so that an expanded nest is one list of statements.
// After it, the loops left are the ones emitted as loops (serial, parallel, vectorized), and the
// ordered reductions, which stay unrolled loops: each of their occurrences becomes a node of its
// own, with its accumulator and addend rewritten as its body was.
//
// The emitter used to expand these loops while translating; expanding them in the IR lets the
// passes after it (store forwarding, ir/passes/forward_stores.h) see the code that is emitted.
#pragma once

#include "ir/ir.h"
#include "ir/passes/ordered_reduction.h"

namespace kiln::ir::passes {

struct ExpandedStmt {
  Stmt body;
  OrderedReductions ordered_reductions;  // keyed by the nodes of `body`
};

// `stmt` expanded, with `reductions` (ordered reductions of `stmt`) mapped to their copies.
// Statements with nothing to expand or substitute are shared.
ExpandedStmt expand_unrolled(const Stmt& stmt, const OrderedReductions& reductions);

}  // namespace kiln::ir::passes
