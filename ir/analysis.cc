#include "ir/analysis.h"

#include <algorithm>
#include <set>

namespace kiln::ir {

void visit_exprs(const Expr& expr, const std::function<void(const Expr&)>& f) {
  if (!expr.defined()) return;
  f(expr);
  visit_exprs(expr->a, f);
  visit_exprs(expr->b, f);
  visit_exprs(expr->c, f);
}

bool uses_var(const Expr& expr, const ExprNode* v) {
  if (!expr.defined()) return false;
  if (expr.get() == v) return true;
  return uses_var(expr->a, v) || uses_var(expr->b, v) || uses_var(expr->c, v);
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
  if (!expr.defined()) return expr;
  if (expr.get() == v) return value;
  if (!uses_var(expr, v)) return expr;
  switch (expr->kind) {
    case ExprKind::kNot:
      return !substitute(expr->a, v, value);
    case ExprKind::kSelect:
      return select(substitute(expr->a, v, value), substitute(expr->b, v, value),
                    substitute(expr->c, v, value));
    case ExprKind::kLoad:
      return expr->buffer.load_flat(substitute(expr->a, v, value));
    case ExprKind::kCall: {
      std::vector<Expr> args = {substitute(expr->a, v, value)};
      if (expr->b.defined()) args.push_back(substitute(expr->b, v, value));
      return call(expr->call_op, std::move(args));
    }
    default:
      return make_binary(expr->kind, substitute(expr->a, v, value), substitute(expr->b, v, value));
  }
}

namespace {

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
        if (x->dtype == DType::kFloat32) ++n;
        break;
      default:
        break;
    }
  });
  return n;
}

void walk_stmts(const Stmt& s, const std::function<void(const Stmt&)>& f) {
  if (!s.defined()) return;
  f(s);
  switch (s->kind) {
    case StmtKind::kFor:
    case StmtKind::kAllocate:
      walk_stmts(s->body, f);
      break;
    case StmtKind::kSeq:
      for (const Stmt& c : s->seq) walk_stmts(c, f);
      break;
    case StmtKind::kIf:
      walk_stmts(s->then_case, f);
      walk_stmts(s->else_case, f);
      break;
    case StmtKind::kStore:
      break;
  }
}

void stmt_exprs(const Stmt& s, const std::function<void(const Expr&)>& f) {
  walk_stmts(s, [&](const Stmt& x) {
    if (x->kind == StmtKind::kStore) {
      visit_exprs(x->index, f);
      visit_exprs(x->value, f);
    } else if (x->kind == StmtKind::kIf) {
      visit_exprs(x->condition, f);
    }
  });
}

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
  }
  return 0;
}

std::vector<const ExprNode*> free_vars(const Stmt& stmt) {
  std::set<const ExprNode*> bound;
  walk_stmts(stmt, [&](const Stmt& s) {
    if (s->kind == StmtKind::kFor) bound.insert(s->loop_var.get());
  });
  std::vector<const ExprNode*> out;
  stmt_exprs(stmt, [&](const Expr& e) {
    if (e->kind == ExprKind::kVar && !bound.count(e.get()) &&
        std::find(out.begin(), out.end(), e.get()) == out.end()) {
      out.push_back(e.get());
    }
  });
  return out;
}

std::vector<const BufferNode*> used_buffers(const Stmt& stmt) {
  std::set<const BufferNode*> allocated;
  std::vector<const BufferNode*> out;
  auto add = [&](const BufferNode* b) {
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  };
  walk_stmts(stmt, [&](const Stmt& s) {
    if (s->kind == StmtKind::kAllocate) allocated.insert(s->buffer.get());
    if (s->kind == StmtKind::kStore) add(s->buffer.get());
  });
  stmt_exprs(stmt, [&](const Expr& e) {
    if (e->kind == ExprKind::kLoad) add(e->buffer.get());
  });
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const BufferNode* b) { return allocated.count(b) > 0; }),
            out.end());
  return out;
}

}  // namespace kiln::ir
