#include "ir/mutator.h"

#include <memory>
#include <utility>
#include <vector>

namespace kiln::ir {

namespace {

// A copy of `stmt`'s node for the hooks to edit: every field not replaced is kept as it was.
StmtNode copy_of(const Stmt& stmt) { return *stmt.get(); }

// The default of the hooks of kinds whose only child is a body (kFor, kAllocate).
Stmt with_body_mutated(IRMutator& mutator, const Stmt& stmt) {
  Stmt body = mutator.mutate(stmt->body);
  if (body.same_as(stmt->body)) return stmt;
  StmtNode n = copy_of(stmt);
  n.body = std::move(body);
  return make_stmt(std::move(n));
}

}  // namespace

// An undefined handle is returned as it is.
KILN_IR_DEFINE_ENTRIES(IRMutator, mutate, mutate_, Expr, Stmt, node)

Expr IRMutator::mutate_int_imm(const Expr& expr) { return expr; }
Expr IRMutator::mutate_float_imm(const Expr& expr) { return expr; }
Expr IRMutator::mutate_var(const Expr& expr) { return expr; }

Expr IRMutator::mutate_binary(const Expr& expr) {
  Expr a = mutate(expr->a), b = mutate(expr->b);
  if (a.same_as(expr->a) && b.same_as(expr->b)) return expr;
  return make_binary(expr->kind, std::move(a), std::move(b));
}

Expr IRMutator::mutate_not(const Expr& expr) {
  Expr a = mutate(expr->a);
  if (a.same_as(expr->a)) return expr;
  return !std::move(a);
}

Expr IRMutator::mutate_select(const Expr& expr) {
  Expr c = mutate(expr->a), t = mutate(expr->b), f = mutate(expr->c);
  if (c.same_as(expr->a) && t.same_as(expr->b) && f.same_as(expr->c)) return expr;
  return select(std::move(c), std::move(t), std::move(f));
}

Expr IRMutator::mutate_load(const Expr& expr) {
  Expr index = mutate(expr->a);
  if (index.same_as(expr->a)) return expr;
  return expr->buffer.load_flat(index);
}

Expr IRMutator::mutate_call(const Expr& expr) {
  Expr a = mutate(expr->a), b = mutate(expr->b);
  if (a.same_as(expr->a) && b.same_as(expr->b)) return expr;
  std::vector<Expr> args = {std::move(a)};
  if (b.defined()) args.push_back(std::move(b));
  return call(expr->call_op, std::move(args));
}

Stmt IRMutator::mutate_for(const Stmt& stmt) { return with_body_mutated(*this, stmt); }

Stmt IRMutator::mutate_store(const Stmt& stmt) {
  Expr index = mutate(stmt->index);
  bool changed = !index.same_as(stmt->index);
  std::vector<Expr> indices;
  indices.reserve(stmt->indices.size());
  for (const Expr& i : stmt->indices) {
    indices.push_back(mutate(i));
    changed = changed || !indices.back().same_as(i);
  }
  Expr value = mutate(stmt->value);
  if (!changed && value.same_as(stmt->value)) return stmt;
  StmtNode n = copy_of(stmt);
  n.index = std::move(index);
  n.indices = std::move(indices);
  n.value = std::move(value);
  return make_stmt(std::move(n));
}

Stmt IRMutator::mutate_seq(const Stmt& stmt) {
  std::vector<Stmt> seq;
  seq.reserve(stmt->seq.size());
  bool changed = false;
  for (const Stmt& s : stmt->seq) {
    seq.push_back(mutate(s));
    changed = changed || !seq.back().same_as(s);
  }
  if (!changed) return stmt;
  StmtNode n = copy_of(stmt);
  n.seq = std::move(seq);
  return make_stmt(std::move(n));
}

Stmt IRMutator::mutate_if(const Stmt& stmt) {
  Expr condition = mutate(stmt->condition);
  Stmt then_case = mutate(stmt->then_case), else_case = mutate(stmt->else_case);
  if (condition.same_as(stmt->condition) && then_case.same_as(stmt->then_case) &&
      else_case.same_as(stmt->else_case)) {
    return stmt;
  }
  StmtNode n = copy_of(stmt);
  n.condition = std::move(condition);
  n.then_case = std::move(then_case);
  n.else_case = std::move(else_case);
  return make_stmt(std::move(n));
}

Stmt IRMutator::mutate_allocate(const Stmt& stmt) { return with_body_mutated(*this, stmt); }

Stmt IRMutator::mutate_let(const Stmt& stmt) {
  Expr value = mutate(stmt->value);
  Stmt body = mutate(stmt->body);
  if (value.same_as(stmt->value) && body.same_as(stmt->body)) return stmt;
  StmtNode n = copy_of(stmt);
  n.value = std::move(value);
  n.body = std::move(body);
  return make_stmt(std::move(n));
}

}  // namespace kiln::ir
