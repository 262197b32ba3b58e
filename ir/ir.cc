#include "ir/ir.h"

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "ir/int_arith.h"

namespace kiln::ir {

namespace {

Expr make_node(ExprNode node) { return Expr(std::make_shared<const ExprNode>(std::move(node))); }

bool is_float_const(const Expr& e, double* value) {
  if (e->kind != ExprKind::kFloatImm) return false;
  *value = e->float_value;
  return true;
}

DType result_type(ExprKind kind, const Expr& a) {
  switch (kind) {
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kAnd:
    case ExprKind::kOr:
      return DType::kBool;
    default:
      return a->dtype;
  }
}

// Folds integer constants and arithmetic identities; returns an undefined Expr if nothing folds.
Expr fold_int(ExprKind kind, const Expr& a, const Expr& b) {
  int64_t x = 0, y = 0;
  bool ca = is_const_int(a, &x), cb = is_const_int(b, &y);
  if (ca && cb) {
    switch (kind) {
      case ExprKind::kAdd:
        return Expr(x + y);
      case ExprKind::kSub:
        return Expr(x - y);
      case ExprKind::kMul:
        return Expr(x * y);
      case ExprKind::kDiv:
        if (y != 0) return Expr(floor_div(x, y));
        break;
      case ExprKind::kMod:
        if (y != 0) return Expr(floor_mod(x, y));
        break;
      case ExprKind::kMin:
        return Expr(std::min(x, y));
      case ExprKind::kMax:
        return Expr(std::max(x, y));
      default:
        break;
    }
  }
  switch (kind) {
    case ExprKind::kAdd:
      if (ca && x == 0) return b;
      if (cb && y == 0) return a;
      break;
    case ExprKind::kSub:
      if (cb && y == 0) return a;
      break;
    case ExprKind::kMul:
      if ((ca && x == 0) || (cb && y == 0)) return Expr(int64_t{0});
      if (ca && x == 1) return b;
      if (cb && y == 1) return a;
      break;
    case ExprKind::kDiv:
      if (cb && y == 1) return a;
      break;
    case ExprKind::kMod:
      if (cb && y == 1) return Expr(int64_t{0});
      break;
    default:
      break;
  }
  return Expr();
}

Expr fold_float(ExprKind kind, const Expr& a, const Expr& b) {
  double x = 0, y = 0;
  bool ca = is_float_const(a, &x), cb = is_float_const(b, &y);
  if (ca && cb) {
    switch (kind) {
      case ExprKind::kAdd:
        return f32(x + y);
      case ExprKind::kSub:
        return f32(x - y);
      case ExprKind::kMul:
        return f32(x * y);
      default:
        break;
    }
  }
  return Expr();
}

}  // namespace

int64_t BufferNode::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Buffer::Buffer(std::string name, std::vector<int64_t> shape, BufferScope scope)
    : node_(std::make_shared<const BufferNode>(
          BufferNode{std::move(name), std::move(shape), scope})) {}

Expr Buffer::flat_index(const std::vector<Expr>& indices) const {
  KILN_CHECK(indices.size() == node_->shape.size())
      << "buffer " << node_->name << ": " << indices.size() << " indices for "
      << node_->shape.size() << " dimensions";
  Expr flat(int64_t{0});
  for (size_t i = 0; i < indices.size(); ++i) flat = flat * Expr(node_->shape[i]) + indices[i];
  return flat;
}

Expr Buffer::load(const std::vector<Expr>& indices) const { return load_flat(flat_index(indices)); }

Expr Buffer::load_flat(const Expr& index) const {
  ExprNode n;
  n.kind = ExprKind::kLoad;
  n.dtype = DType::kFloat32;
  n.a = index;
  n.buffer = *this;
  return make_node(std::move(n));
}

Expr::Expr(int64_t value) {
  ExprNode n;
  n.kind = ExprKind::kIntImm;
  n.dtype = DType::kInt64;
  n.int_value = value;
  node_ = std::make_shared<const ExprNode>(std::move(n));
}

Expr var(std::string name) { return var(std::move(name), DType::kInt64); }

Expr var(std::string name, DType dtype) {
  ExprNode n;
  n.kind = ExprKind::kVar;
  n.dtype = dtype;
  n.name = std::move(name);
  return make_node(std::move(n));
}

Expr f32(double value) {
  ExprNode n;
  n.kind = ExprKind::kFloatImm;
  n.dtype = DType::kFloat32;
  n.float_value = value;
  return make_node(std::move(n));
}

bool is_const_int(const Expr& e, int64_t* value) {
  if (!e.defined() || e->kind != ExprKind::kIntImm) return false;
  if (value) *value = e->int_value;
  return true;
}

Expr make_binary(ExprKind kind, Expr a, Expr b) {
  KILN_CHECK(a.defined() && b.defined());
  Expr folded = a->dtype == DType::kInt64 && b->dtype == DType::kInt64 ? fold_int(kind, a, b)
                : a->dtype == DType::kFloat32                          ? fold_float(kind, a, b)
                                                                       : Expr();
  if (folded.defined()) return folded;
  ExprNode n;
  n.kind = kind;
  n.dtype = result_type(kind, a);
  n.a = std::move(a);
  n.b = std::move(b);
  return make_node(std::move(n));
}

Expr operator+(Expr a, Expr b) { return make_binary(ExprKind::kAdd, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_binary(ExprKind::kSub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return make_binary(ExprKind::kMul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return make_binary(ExprKind::kDiv, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return make_binary(ExprKind::kMod, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return make_binary(ExprKind::kLT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return make_binary(ExprKind::kLE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return make_binary(ExprKind::kLT, std::move(b), std::move(a)); }
Expr operator>=(Expr a, Expr b) { return make_binary(ExprKind::kLE, std::move(b), std::move(a)); }
Expr operator==(Expr a, Expr b) { return make_binary(ExprKind::kEQ, std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return make_binary(ExprKind::kNE, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return make_binary(ExprKind::kAnd, std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return make_binary(ExprKind::kOr, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return make_binary(ExprKind::kMin, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return make_binary(ExprKind::kMax, std::move(a), std::move(b)); }

Expr operator!(Expr a) {
  ExprNode n;
  n.kind = ExprKind::kNot;
  n.dtype = DType::kBool;
  n.a = std::move(a);
  return make_node(std::move(n));
}

Expr select(Expr cond, Expr t, Expr f) {
  ExprNode n;
  n.kind = ExprKind::kSelect;
  n.dtype = t->dtype;
  n.a = std::move(cond);
  n.b = std::move(t);
  n.c = std::move(f);
  return make_node(std::move(n));
}

#define KILN_IR_KIND_NAME(enumerator, name, hook, ...) #name,

const char* expr_kind_name(ExprKind kind) {
  static constexpr const char* kNames[] = {KILN_IR_EXPR_KINDS(KILN_IR_KIND_NAME)};
  return static_cast<size_t>(kind) < kNumExprKinds ? kNames[static_cast<size_t>(kind)] : "?";
}

const char* stmt_kind_name(StmtKind kind) {
  static constexpr const char* kNames[] = {KILN_IR_STMT_KINDS(KILN_IR_KIND_NAME)};
  return static_cast<size_t>(kind) < kNumStmtKinds ? kNames[static_cast<size_t>(kind)] : "?";
}

#undef KILN_IR_KIND_NAME

const char* call_op_name(CallOp op) {
  switch (op) {
    case CallOp::kExp:
      return "exp";
    case CallOp::kLog:
      return "log";
    case CallOp::kSqrt:
      return "sqrt";
    case CallOp::kTanh:
      return "tanh";
    case CallOp::kErf:
      return "erf";
    case CallOp::kPow:
      return "pow";
    case CallOp::kAbs:
      return "abs";
    case CallOp::kFloor:
      return "floor";
    case CallOp::kCeil:
      return "ceil";
  }
  return "?";
}

int call_op_arity(CallOp op) { return op == CallOp::kPow ? 2 : 1; }

Expr call(CallOp op, std::vector<Expr> args) {
  KILN_CHECK(static_cast<int>(args.size()) == call_op_arity(op))
      << call_op_name(op) << ": " << args.size() << " operands";
  for (const Expr& a : args) {
    KILN_CHECK(a.defined() && a->dtype == DType::kFloat32)
        << call_op_name(op) << ": operands must be float32";
  }
  ExprNode n;
  n.kind = ExprKind::kCall;
  n.dtype = DType::kFloat32;
  n.call_op = op;
  n.a = std::move(args[0]);
  if (args.size() > 1) n.b = std::move(args[1]);
  return make_node(std::move(n));
}

Expr exp(Expr x) { return call(CallOp::kExp, {std::move(x)}); }
Expr log(Expr x) { return call(CallOp::kLog, {std::move(x)}); }
Expr sqrt(Expr x) { return call(CallOp::kSqrt, {std::move(x)}); }
Expr tanh(Expr x) { return call(CallOp::kTanh, {std::move(x)}); }
Expr erf(Expr x) { return call(CallOp::kErf, {std::move(x)}); }
Expr pow(Expr base, Expr exponent) {
  return call(CallOp::kPow, {std::move(base), std::move(exponent)});
}
Expr abs(Expr x) { return call(CallOp::kAbs, {std::move(x)}); }
Expr floor(Expr x) { return call(CallOp::kFloor, {std::move(x)}); }
Expr ceil(Expr x) { return call(CallOp::kCeil, {std::move(x)}); }

const char* loop_kind_name(LoopKind kind) {
  switch (kind) {
    case LoopKind::kSerial:
      return "serial";
    case LoopKind::kParallel:
      return "parallel";
    case LoopKind::kVectorized:
      return "vectorized";
    case LoopKind::kUnrolled:
      return "unrolled";
  }
  return "?";
}

Stmt make_stmt(StmtNode node) { return Stmt(std::make_shared<const StmtNode>(std::move(node))); }

Stmt For(Expr loop_var, int64_t extent, LoopKind kind, Stmt body) {
  KILN_CHECK(loop_var->kind == ExprKind::kVar && extent >= 0) << "loop extent " << extent;
  StmtNode n;
  n.kind = StmtKind::kFor;
  n.loop_var = std::move(loop_var);
  n.extent = extent;
  n.loop_kind = kind;
  n.body = std::move(body);
  return make_stmt(std::move(n));
}

Stmt Store(const Buffer& buffer, const std::vector<Expr>& indices, Expr value) {
  StmtNode n;
  n.kind = StmtKind::kStore;
  n.buffer = buffer;
  n.index = buffer.flat_index(indices);
  n.value = std::move(value);
  n.indices = indices;
  return make_stmt(std::move(n));
}

Stmt StoreFlat(const Buffer& buffer, Expr index, Expr value) {
  StmtNode n;
  n.kind = StmtKind::kStore;
  n.buffer = buffer;
  n.index = std::move(index);
  n.value = std::move(value);
  return make_stmt(std::move(n));
}

Stmt Seq(std::vector<Stmt> stmts) {
  if (stmts.size() == 1) return stmts[0];
  StmtNode n;
  n.kind = StmtKind::kSeq;
  n.seq = std::move(stmts);
  return make_stmt(std::move(n));
}

Stmt If(Expr condition, Stmt then_case, Stmt else_case) {
  StmtNode n;
  n.kind = StmtKind::kIf;
  n.condition = std::move(condition);
  n.then_case = std::move(then_case);
  n.else_case = std::move(else_case);
  return make_stmt(std::move(n));
}

Stmt Allocate(const Buffer& local_buffer, Stmt body) {
  KILN_CHECK(local_buffer->scope == BufferScope::kLocal)
      << "Allocate of non-local buffer " << local_buffer->name;
  StmtNode n;
  n.kind = StmtKind::kAllocate;
  n.buffer = local_buffer;
  n.body = std::move(body);
  return make_stmt(std::move(n));
}

Stmt Let(Expr var, Expr value, Stmt body) {
  KILN_CHECK(var->kind == ExprKind::kVar && value.defined() && var->dtype == value->dtype)
      << "let of " << var->name;
  StmtNode n;
  n.kind = StmtKind::kLet;
  n.loop_var = std::move(var);
  n.value = std::move(value);
  n.body = std::move(body);
  return make_stmt(std::move(n));
}

Stmt LoopNest(const std::vector<LoopSpec>& loops, Stmt body) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it)
    body = For(it->var, it->extent, it->kind, body);
  return body;
}

int Program::buffer_index(const BufferNode* buffer) const {
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].get() == buffer) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace kiln::ir
