#include "ir/analysis.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "ir/mutator.h"
#include "ir/visitor.h"

namespace kiln::ir {

namespace {

// Calls a function on every expression it reaches, pre-order.
class ExprCallback : public IRVisitor {
 public:
  explicit ExprCallback(const std::function<void(const Expr&)>& f) : f_(f) {}
  void visit(const Expr& expr) override {
    if (!expr.defined()) return;
    f_(expr);
    IRVisitor::visit(expr);
  }
  using IRVisitor::visit;

 private:
  const std::function<void(const Expr&)>& f_;
};

// Looks for one variable, and stops descending once it is found.
class FindVar : public IRVisitor {
 public:
  explicit FindVar(const ExprNode* v) : v_(v) {}
  bool found = false;
  void visit(const Expr& expr) override {
    if (found || !expr.defined()) return;
    if (expr.get() == v_) {
      found = true;
      return;
    }
    IRVisitor::visit(expr);
  }
  using IRVisitor::visit;

 private:
  const ExprNode* v_;
};

// Replaces variables by expressions (the mutator folds what the replacements make constant): one
// variable, or those of a VarMap.
class SubstituteVars : public IRMutator {
 public:
  SubstituteVars(const ExprNode* v, const Expr& value) : v_(v), value_(&value) {}
  explicit SubstituteVars(const VarMap& values) : values_(&values) {}

 protected:
  Expr mutate_var(const Expr& expr) override {
    if (!values_) return expr.get() == v_ ? *value_ : expr;
    auto it = values_->find(expr.get());
    return it == values_->end() ? expr : it->second;
  }

  // A Store's flat index is rebuilt from its substituted per-dimension indices, as Store()
  // builds it, rather than substituted itself (the two may fold differently).
  Stmt mutate_store(const Stmt& stmt) override {
    Stmt out = IRMutator::mutate_store(stmt);
    if (out.get() == stmt.get() || stmt->indices.empty()) return out;
    return Store(out->buffer, out->indices, out->value);
  }

 private:
  const ExprNode* v_ = nullptr;
  const Expr* value_ = nullptr;
  const VarMap* values_ = nullptr;
};

// Walks the statements only (expressions hold no loops), handing each loop to `take_`.
class LoopWalk : public IRVisitor {
 public:
  explicit LoopWalk(const std::function<bool(const Stmt&)>& take) : take_(take) {}
  using IRVisitor::visit;
  void visit(const Expr&) override {}

 protected:
  void visit_for(const Stmt& stmt) override {
    if (!take_(stmt)) IRVisitor::visit_for(stmt);
  }

 private:
  const std::function<bool(const Stmt&)>& take_;
};

}  // namespace

void visit_loops(const Stmt& stmt, const std::function<bool(const Stmt& loop)>& take) {
  LoopWalk(take).visit(stmt);
}

void visit_exprs(const Expr& expr, const std::function<void(const Expr&)>& f) {
  ExprCallback(f).visit(expr);
}

bool uses_var(const Expr& expr, const ExprNode* v) {
  FindVar finder(v);
  finder.visit(expr);
  return finder.found;
}

std::optional<int64_t> linear_coefficient(const Expr& expr, const ExprNode* v) {
  if (!uses_var(expr, v)) return 0;
  switch (expr->kind) {
    case ExprKind::kVar:
      return 1;
    case ExprKind::kAdd:
    case ExprKind::kSub: {
      auto ca = linear_coefficient(expr->a, v), cb = linear_coefficient(expr->b, v);
      if (!ca || !cb) return std::nullopt;
      return expr->kind == ExprKind::kAdd ? *ca + *cb : *ca - *cb;
    }
    case ExprKind::kMul: {
      int64_t k = 0;
      if (is_const_int(expr->a, &k)) {
        auto c = linear_coefficient(expr->b, v);
        return c ? std::optional<int64_t>(*c * k) : std::nullopt;
      }
      if (is_const_int(expr->b, &k)) {
        auto c = linear_coefficient(expr->a, v);
        return c ? std::optional<int64_t>(*c * k) : std::nullopt;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

Expr substitute(const Expr& expr, const ExprNode* v, const Expr& value) {
  return SubstituteVars(v, value).mutate(expr);
}

Stmt substitute(const Stmt& stmt, const ExprNode* v, const Expr& value) {
  return SubstituteVars(v, value).mutate(stmt);
}

Expr substitute(const Expr& expr, const VarMap& values) {
  return values.empty() ? expr : SubstituteVars(values).mutate(expr);
}

Stmt substitute(const Stmt& stmt, const VarMap& values) {
  return values.empty() ? stmt : SubstituteVars(values).mutate(stmt);
}

namespace {

// Float operations of one evaluation of an expression: arithmetic, min/max and math calls (each
// call counts as one operation, as TVM counts an intrinsic). Integer index arithmetic is free.
int64_t float_ops(const Expr& e) {
  int64_t n = 0;
  visit_exprs(e, [&](const Expr& x) {
    switch (x->kind) {
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMin:
      case ExprKind::kMax:
      case ExprKind::kCall:
        if (x->dtype == DType::kFloat32) ++n;
        break;
      default:
        break;
    }
  });
  return n;
}

// Collects, in one walk, the variables a statement binds and the variables and buffers it uses,
// each in order of first use.
class UseCollector : public IRVisitor {
 public:
  std::set<const ExprNode*> bound;
  std::vector<const ExprNode*> vars;
  std::set<const BufferNode*> allocated;
  std::vector<const BufferNode*> stored, loaded;

 protected:
  void visit_var(const Expr& expr) override { add(vars, expr.get()); }
  void visit_load(const Expr& expr) override {
    add(loaded, expr->buffer.get());
    IRVisitor::visit_load(expr);
  }
  void visit_for(const Stmt& stmt) override {
    bound.insert(stmt->loop_var.get());
    IRVisitor::visit_for(stmt);
  }
  void visit_store(const Stmt& stmt) override {
    add(stored, stmt->buffer.get());
    IRVisitor::visit_store(stmt);
  }
  void visit_allocate(const Stmt& stmt) override {
    allocated.insert(stmt->buffer.get());
    IRVisitor::visit_allocate(stmt);
  }
  void visit_let(const Stmt& stmt) override {
    bound.insert(stmt->loop_var.get());
    IRVisitor::visit_let(stmt);
  }

 private:
  template <typename T>
  static void add(std::vector<const T*>& list, const T* x) {
    if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
  }
};

}  // namespace

int64_t count_flops(const Stmt& stmt) {
  switch (stmt->kind) {
    case StmtKind::kFor:
      return stmt->extent * count_flops(stmt->body);
    case StmtKind::kStore:
      return float_ops(stmt->value);
    case StmtKind::kSeq: {
      int64_t n = 0;
      for (const Stmt& c : stmt->seq) n += count_flops(c);
      return n;
    }
    case StmtKind::kIf:
      return std::max(count_flops(stmt->then_case),
                      stmt->else_case.defined() ? count_flops(stmt->else_case) : 0);
    case StmtKind::kAllocate:
      return count_flops(stmt->body);
    case StmtKind::kLet:
      return float_ops(stmt->value) + count_flops(stmt->body);
  }
  return 0;
}

std::vector<const ExprNode*> free_vars(const Stmt& stmt) {
  UseCollector uses;
  uses.visit(stmt);
  // A variable is bound if any loop or Let of `stmt` binds it, wherever the use is.
  std::vector<const ExprNode*> out;
  for (const ExprNode* v : uses.vars) {
    if (!uses.bound.count(v)) out.push_back(v);
  }
  return out;
}

std::vector<const BufferNode*> used_buffers(const Stmt& stmt) {
  UseCollector uses;
  uses.visit(stmt);
  // Stored buffers first, then those only loaded from.
  std::vector<const BufferNode*> out;
  for (const auto* list : {&uses.stored, &uses.loaded}) {
    for (const BufferNode* b : *list) {
      if (!uses.allocated.count(b) && std::find(out.begin(), out.end(), b) == out.end()) {
        out.push_back(b);
      }
    }
  }
  return out;
}

void append_flattened(std::vector<Stmt>* list, const Stmt& stmt) {
  if (!stmt.defined()) return;
  if (stmt->kind != StmtKind::kSeq) {
    list->push_back(stmt);
    return;
  }
  for (const Stmt& s : stmt->seq) append_flattened(list, s);
}

bool structurally_equal(const Expr& x, const Expr& y) {
  if (x.same_as(y)) return true;
  if (!x.defined() || !y.defined()) return false;
  if (x->kind != y->kind || x->dtype != y->dtype) return false;
  switch (x->kind) {
    case ExprKind::kIntImm:
      return x->int_value == y->int_value;
    case ExprKind::kFloatImm:
      return x->float_value == y->float_value;
    case ExprKind::kVar:
      return false;  // variables are equal only as the same node
    case ExprKind::kLoad:
      if (!x->buffer.same_as(y->buffer)) return false;
      break;
    case ExprKind::kCall:
      if (x->call_op != y->call_op) return false;
      break;
    default:
      break;
  }
  return structurally_equal(x->a, y->a) && structurally_equal(x->b, y->b) &&
         structurally_equal(x->c, y->c);
}

}  // namespace kiln::ir
