// IRMutator: a rewrite of expressions and statements that shares every node it leaves alone, for
// passes (substitution, fusion, ...) that change a few nodes of a large tree.
//
// Contract:
//  - mutate(Expr) / mutate(Stmt) return undefined handles unchanged and otherwise dispatch on the
//    node's kind to its hook (the hook its row in ir/kinds.h names). Every hook's default mutates
//    the node's children (the same ones, in the same order, as IRVisitor visits) and
//      * returns the very same handle when no child changed (compare with Expr::same_as), so an
//        identity mutation allocates nothing;
//      * otherwise rebuilds the node: expressions through the public constructors (make_binary,
//        operator!, select, Buffer::load_flat, call), which recompute the dtype and may fold
//        constants; statements as a copy of the node with the changed children replaced, which
//        keeps everything else (loop variable, kind and extent, buffer, the Store's per-dimension
//        `indices`, mutated like its flat `index`).
//  - A loop's (or a Let's) variable is a binding, not a use: the default leaves it alone. A pass
//    that renames loops overrides mutate_for.
//  - Override mutate(Expr)/mutate(Stmt) to see every node, or one hook to rewrite one kind; call
//    the base to keep descending.
#pragma once

#include "ir/ir.h"

namespace kiln::ir {

class IRMutator {
  // Public: mutate(const Expr&) -> Expr, mutate(const Stmt&) -> Stmt, both virtual. Protected:
  // the hooks, one per row of KILN_IR_EXPR_HOOKS / KILN_IR_STMT_HOOKS (ir/kinds.h, whose
  // KILN_IR_HOOK_CLASS is IRVisitor's outline too), named as IRVisitor's with mutate_ for
  // visit_; `expr` or `stmt` is defined and of a kind whose row names the hook (mutate_binary:
  // check expr->kind).
  KILN_IR_HOOK_CLASS(IRMutator, mutate, mutate_, Expr, Stmt)
};

}  // namespace kiln::ir
