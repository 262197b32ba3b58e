// IRVisitor: a read-only walk over expressions and statements, for analyses that would otherwise
// each hand-write the same recursion.
//
// Contract:
//  - visit(Expr) / visit(Stmt) ignore undefined handles and otherwise dispatch on the node's kind
//    to one hook. Every hook's default visits the node's children, in this order:
//      binary kinds: a, b;  kNot: a;  kSelect: condition, true value, false value;
//      kLoad: index;  kCall: a, then b when the op takes two operands;  immediates, kVar: none;
//      kFor: body;  kStore: index, indices (each), value;  kSeq: each in order;
//      kIf: condition, then, else (when defined);  kAllocate: body.
//    A loop's variable is a binding, not a use: it is not visited (visit_for can read it).
//    Store's `indices` are the per-dimension form of its flat `index`, so a sub-expression that
//    occurs in both is visited twice; overriders that count must take that into account.
//  - Override visit(Expr) or visit(Stmt) to see every node (call the base to keep descending);
//    override a hook to handle one kind (call the base hook to descend into its children).
//  - Nodes are shared, so a sub-expression reachable along two paths is visited once per path.
#pragma once

#include "ir/ir.h"

namespace kiln::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  virtual void visit(const Expr& expr);
  virtual void visit(const Stmt& stmt);

 protected:
  // Expression hooks; `expr` is defined and of the hook's kind.
  virtual void visit_int_imm(const Expr& expr);
  virtual void visit_float_imm(const Expr& expr);
  virtual void visit_var(const Expr& expr);
  // kAdd .. kOr: every kind with two operands a and b (check expr->kind for which).
  virtual void visit_binary(const Expr& expr);
  virtual void visit_not(const Expr& expr);
  virtual void visit_select(const Expr& expr);
  virtual void visit_load(const Expr& expr);
  virtual void visit_call(const Expr& expr);

  // Statement hooks; `stmt` is defined and of the hook's kind.
  virtual void visit_for(const Stmt& stmt);
  virtual void visit_store(const Stmt& stmt);
  virtual void visit_seq(const Stmt& stmt);
  virtual void visit_if(const Stmt& stmt);
  virtual void visit_allocate(const Stmt& stmt);
};

}  // namespace kiln::ir
