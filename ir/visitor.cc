#include "ir/visitor.h"

namespace kiln::ir {

void IRVisitor::visit(const Expr& expr) {
  if (!expr.defined()) return;
  switch (expr->kind) {
    case ExprKind::kIntImm:
      return visit_int_imm(expr);
    case ExprKind::kFloatImm:
      return visit_float_imm(expr);
    case ExprKind::kVar:
      return visit_var(expr);
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kMin:
    case ExprKind::kMax:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kAnd:
    case ExprKind::kOr:
      return visit_binary(expr);
    case ExprKind::kNot:
      return visit_not(expr);
    case ExprKind::kSelect:
      return visit_select(expr);
    case ExprKind::kLoad:
      return visit_load(expr);
    case ExprKind::kCall:
      return visit_call(expr);
  }
}

void IRVisitor::visit(const Stmt& stmt) {
  if (!stmt.defined()) return;
  switch (stmt->kind) {
    case StmtKind::kFor:
      return visit_for(stmt);
    case StmtKind::kStore:
      return visit_store(stmt);
    case StmtKind::kSeq:
      return visit_seq(stmt);
    case StmtKind::kIf:
      return visit_if(stmt);
    case StmtKind::kAllocate:
      return visit_allocate(stmt);
  }
}

void IRVisitor::visit_int_imm(const Expr&) {}
void IRVisitor::visit_float_imm(const Expr&) {}
void IRVisitor::visit_var(const Expr&) {}

void IRVisitor::visit_binary(const Expr& expr) {
  visit(expr->a);
  visit(expr->b);
}

void IRVisitor::visit_not(const Expr& expr) { visit(expr->a); }

void IRVisitor::visit_select(const Expr& expr) {
  visit(expr->a);
  visit(expr->b);
  visit(expr->c);
}

void IRVisitor::visit_load(const Expr& expr) { visit(expr->a); }

void IRVisitor::visit_call(const Expr& expr) {
  visit(expr->a);
  visit(expr->b);  // undefined for one-operand ops: visit() ignores it
}

void IRVisitor::visit_for(const Stmt& stmt) { visit(stmt->body); }

void IRVisitor::visit_store(const Stmt& stmt) {
  visit(stmt->index);
  for (const Expr& i : stmt->indices) visit(i);
  visit(stmt->value);
}

void IRVisitor::visit_seq(const Stmt& stmt) {
  for (const Stmt& s : stmt->seq) visit(s);
}

void IRVisitor::visit_if(const Stmt& stmt) {
  visit(stmt->condition);
  visit(stmt->then_case);
  visit(stmt->else_case);
}

void IRVisitor::visit_allocate(const Stmt& stmt) { visit(stmt->body); }

}  // namespace kiln::ir
