// IRMutator: a rewrite of expressions and statements that shares every node it leaves alone, for
// passes (substitution, fusion, ...) that change a few nodes of a large tree.
//
// Contract:
//  - mutate(Expr) / mutate(Stmt) return undefined handles unchanged and otherwise dispatch on the
//    node's kind to one hook. Every hook's default mutates the node's children (the same ones,
//    in the same order, as IRVisitor visits) and
//      * returns the very same handle when no child changed (compare with Expr::same_as), so an
//        identity mutation allocates nothing;
//      * otherwise rebuilds the node: expressions through the public constructors (make_binary,
//        operator!, select, Buffer::load_flat, call), which recompute the dtype and may fold
//        constants; statements as a copy of the node with the changed children replaced, which
//        keeps everything else (loop variable, kind and extent, buffer, the Store's per-dimension
//        `indices`, mutated like its flat `index`).
//  - A loop's variable is a binding, not a use: the default leaves it alone. A pass that renames
//    loops overrides mutate_for.
//  - Override mutate(Expr)/mutate(Stmt) to see every node, or one hook to rewrite one kind; call
//    the base to keep descending.
#pragma once

#include "ir/ir.h"

namespace kiln::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  virtual Expr mutate(const Expr& expr);
  virtual Stmt mutate(const Stmt& stmt);

 protected:
  // Expression hooks; `expr` is defined and of the hook's kind.
  virtual Expr mutate_int_imm(const Expr& expr);
  virtual Expr mutate_float_imm(const Expr& expr);
  virtual Expr mutate_var(const Expr& expr);
  // kAdd .. kOr: every kind with two operands a and b (check expr->kind for which).
  virtual Expr mutate_binary(const Expr& expr);
  virtual Expr mutate_not(const Expr& expr);
  virtual Expr mutate_select(const Expr& expr);
  virtual Expr mutate_load(const Expr& expr);
  virtual Expr mutate_call(const Expr& expr);

  // Statement hooks; `stmt` is defined and of the hook's kind.
  virtual Stmt mutate_for(const Stmt& stmt);
  virtual Stmt mutate_store(const Stmt& stmt);
  virtual Stmt mutate_seq(const Stmt& stmt);
  virtual Stmt mutate_if(const Stmt& stmt);
  virtual Stmt mutate_allocate(const Stmt& stmt);
};

}  // namespace kiln::ir
