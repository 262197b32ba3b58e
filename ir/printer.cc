#include "ir/printer.h"

#include <sstream>

#include "ir/visitor.h"

namespace kiln::ir {

namespace {

const char* binary_symbol(ExprKind kind) {
  switch (kind) {
    case ExprKind::kAdd:
      return " + ";
    case ExprKind::kSub:
      return " - ";
    case ExprKind::kMul:
      return "*";
    case ExprKind::kDiv:
      return " / ";
    case ExprKind::kMod:
      return " % ";
    case ExprKind::kLT:
      return " < ";
    case ExprKind::kLE:
      return " <= ";
    case ExprKind::kEQ:
      return " == ";
    case ExprKind::kNE:
      return " != ";
    case ExprKind::kAnd:
      return " && ";
    case ExprKind::kOr:
      return " || ";
    default:
      return nullptr;
  }
}

// Writes expressions inline and statements one per line, `indent` levels (two spaces each) deep.
class IRTextPrinter : public IRVisitor {
 public:
  IRTextPrinter(std::ostream& os, int indent) : os_(os), indent_(indent) {}

 protected:
  void visit_int_imm(const Expr& e) override { os_ << e->int_value; }
  void visit_float_imm(const Expr& e) override { os_ << e->float_value << "f"; }
  void visit_var(const Expr& e) override { os_ << e->name; }
  void visit_binary(const Expr& e) override {
    if (e->kind == ExprKind::kMin || e->kind == ExprKind::kMax) {
      os_ << (e->kind == ExprKind::kMin ? "min(" : "max(");
      visit(e->a);
      os_ << ", ";
      visit(e->b);
      os_ << ")";
      return;
    }
    os_ << "(";
    visit(e->a);
    os_ << binary_symbol(e->kind);
    visit(e->b);
    os_ << ")";
  }
  void visit_not(const Expr& e) override {
    os_ << "!(";
    visit(e->a);
    os_ << ")";
  }
  void visit_select(const Expr& e) override {
    os_ << "select(";
    visit(e->a);
    os_ << ", ";
    visit(e->b);
    os_ << ", ";
    visit(e->c);
    os_ << ")";
  }
  void visit_call(const Expr& e) override {
    os_ << call_op_name(e->call_op) << "(";
    visit(e->a);
    if (e->b.defined()) {
      os_ << ", ";
      visit(e->b);
    }
    os_ << ")";
  }
  void visit_load(const Expr& e) override {
    os_ << e->buffer->name << "[";
    visit(e->a);
    os_ << "]";
  }

  void visit_for(const Stmt& s) override {
    os_ << pad() << "for " << s->loop_var->name << " in 0.." << s->extent;
    if (s->loop_kind != LoopKind::kSerial) os_ << " (" << loop_kind_name(s->loop_kind) << ")";
    os_ << ":\n";
    nested(s->body);
  }
  void visit_store(const Stmt& s) override {
    os_ << pad() << s->buffer->name << "[";
    visit(s->index);
    os_ << "] = ";
    visit(s->value);
    os_ << "\n";
  }
  void visit_if(const Stmt& s) override {
    os_ << pad() << "if ";
    visit(s->condition);
    os_ << ":\n";
    nested(s->then_case);
    if (s->else_case.defined()) {
      os_ << pad() << "else:\n";
      nested(s->else_case);
    }
  }
  void visit_allocate(const Stmt& s) override {
    os_ << pad() << "allocate " << s->buffer->name << "[" << s->buffer->num_elements() << "]\n";
    visit(s->body);  // the allocation's scope is not indented
  }
  void visit_let(const Stmt& s) override {
    os_ << pad() << "let " << s->loop_var->name << " = ";
    visit(s->value);
    os_ << "\n";
    visit(s->body);  // nor a binding's: a pass may chain hundreds of them
  }

 private:
  std::string pad() const { return std::string(indent_ * 2, ' '); }
  void nested(const Stmt& s) {
    ++indent_;
    visit(s);
    --indent_;
  }

  std::ostream& os_;
  int indent_;
};

const char* scope_name(BufferScope scope) {
  switch (scope) {
    case BufferScope::kArgument:
      return "argument";
    case BufferScope::kWorkspace:
      return "workspace";
    case BufferScope::kLocal:
      return "local";
  }
  return "?";
}

}  // namespace

std::string to_string(const Expr& expr) {
  std::ostringstream os;
  IRTextPrinter(os, 0).visit(expr);
  return os.str();
}

std::string to_string(const Stmt& stmt, int indent) {
  std::ostringstream os;
  IRTextPrinter(os, indent).visit(stmt);
  return os.str();
}

std::string to_string(const Program& program) {
  std::ostringstream os;
  os << "program " << program.name << "\n";
  for (const Buffer& b : program.buffers) {
    os << "  buffer " << b->name << "[";
    for (size_t i = 0; i < b->shape.size(); ++i) os << (i ? ", " : "") << b->shape[i];
    os << "] " << scope_name(b->scope) << "\n";
  }
  for (const Stage& stage : program.stages) {
    os << "stage " << stage.name << (stage.timed ? " (timed)" : " (untimed: layout transform)")
       << ":\n";
    IRTextPrinter(os, 1).visit(stage.body);
  }
  return os.str();
}

}  // namespace kiln::ir
