// IRVisitor: a read-only walk over expressions and statements, for analyses that would otherwise
// each hand-write the same recursion.
//
// Contract:
//  - visit(Expr) / visit(Stmt) ignore undefined handles and otherwise dispatch on the node's kind
//    to its hook (the hook its row in ir/kinds.h names). Every hook's default visits the node's
//    children, in this order:
//      binary kinds: a, b;  kNot: a;  kSelect: condition, true value, false value;
//      kLoad: index;  kCall: a, then b when the op takes two operands;  immediates, kVar: none;
//      kFor: body;  kStore: index, indices (each), value;  kSeq: each in order;
//      kIf: condition, then, else (when defined);  kAllocate: body;
//      kLet: value, body.
//    A loop's (or a Let's) variable is a binding, not a use: it is not visited (visit_for can read
//    it). Store's `indices` are the per-dimension form of its flat `index`, so a sub-expression
//    that occurs in both is visited twice; overriders that count must take that into account.
//  - Override visit(Expr) or visit(Stmt) to see every node (call the base to keep descending);
//    override a hook to handle one kind (call the base hook to descend into its children).
//  - Nodes are shared, so a sub-expression reachable along two paths is visited once per path.
#pragma once

#include "ir/ir.h"

namespace kiln::ir {

class IRVisitor {
  // Public: visit(const Expr&), visit(const Stmt&), both virtual. Protected: the hooks, one per
  // row of KILN_IR_EXPR_HOOKS / KILN_IR_STMT_HOOKS (ir/kinds.h, whose KILN_IR_HOOK_CLASS is
  // IRMutator's outline too); `expr` or `stmt` is defined and of a kind whose row names the hook:
  //   visit_int_imm, visit_float_imm, visit_var,
  //   visit_binary (kAdd .. kOr: every kind with two operands a and b; check expr->kind),
  //   visit_not, visit_select, visit_load, visit_call;
  //   visit_for, visit_store, visit_seq, visit_if, visit_allocate, visit_let.
  KILN_IR_HOOK_CLASS(IRVisitor, visit, visit_, void, void)
};

}  // namespace kiln::ir
