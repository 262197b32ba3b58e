#include "ir/visitor.h"

namespace kiln::ir {

// An undefined handle reaches no hook.
KILN_IR_DEFINE_ENTRIES(IRVisitor, visit, visit_, void, void, void())

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

void IRVisitor::visit_let(const Stmt& stmt) {
  visit(stmt->value);
  visit(stmt->body);
}

}  // namespace kiln::ir
