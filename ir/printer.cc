#include "ir/printer.h"

#include <sstream>

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

void print_expr(std::ostream& os, const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm:
      os << e->int_value;
      return;
    case ExprKind::kFloatImm:
      os << e->float_value << "f";
      return;
    case ExprKind::kVar:
      os << e->name;
      return;
    case ExprKind::kMin:
    case ExprKind::kMax:
      os << (e->kind == ExprKind::kMin ? "min(" : "max(");
      print_expr(os, e->a);
      os << ", ";
      print_expr(os, e->b);
      os << ")";
      return;
    case ExprKind::kNot:
      os << "!(";
      print_expr(os, e->a);
      os << ")";
      return;
    case ExprKind::kSelect:
      os << "select(";
      print_expr(os, e->a);
      os << ", ";
      print_expr(os, e->b);
      os << ", ";
      print_expr(os, e->c);
      os << ")";
      return;
    case ExprKind::kCall:
      os << call_op_name(e->call_op) << "(";
      print_expr(os, e->a);
      if (e->b.defined()) {
        os << ", ";
        print_expr(os, e->b);
      }
      os << ")";
      return;
    case ExprKind::kLoad:
      os << e->buffer->name << "[";
      print_expr(os, e->a);
      os << "]";
      return;
    default:
      os << "(";
      print_expr(os, e->a);
      os << binary_symbol(e->kind);
      print_expr(os, e->b);
      os << ")";
  }
}

void print_stmt(std::ostream& os, const Stmt& s, int indent) {
  std::string pad(indent * 2, ' ');
  switch (s->kind) {
    case StmtKind::kFor:
      os << pad << "for " << s->loop_var->name << " in 0.." << s->extent;
      if (s->loop_kind != LoopKind::kSerial) os << " (" << loop_kind_name(s->loop_kind) << ")";
      os << ":\n";
      print_stmt(os, s->body, indent + 1);
      return;
    case StmtKind::kStore:
      os << pad << s->buffer->name << "[";
      print_expr(os, s->index);
      os << "] = ";
      print_expr(os, s->value);
      os << "\n";
      return;
    case StmtKind::kSeq:
      for (const Stmt& child : s->seq) print_stmt(os, child, indent);
      return;
    case StmtKind::kIf:
      os << pad << "if ";
      print_expr(os, s->condition);
      os << ":\n";
      print_stmt(os, s->then_case, indent + 1);
      if (s->else_case.defined()) {
        os << pad << "else:\n";
        print_stmt(os, s->else_case, indent + 1);
      }
      return;
    case StmtKind::kAllocate:
      os << pad << "allocate " << s->buffer->name << "[" << s->buffer->num_elements() << "]\n";
      print_stmt(os, s->body, indent);
      return;
  }
}

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
  print_expr(os, expr);
  return os.str();
}

std::string to_string(const Stmt& stmt, int indent) {
  std::ostringstream os;
  print_stmt(os, stmt, indent);
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
    print_stmt(os, stage.body, 1);
  }
  return os.str();
}

}  // namespace kiln::ir
