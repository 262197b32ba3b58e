#include "ir/passes/unroll.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "ir/analysis.h"
#include "ir/int_arith.h"
#include "ir/mutator.h"
#include "ir/visitor.h"

namespace kiln::ir::passes {

int64_t unrolled_work(const Stmt& stmt, UnrollView view, int simd_lanes) {
  if (!stmt.defined()) return 0;
  const bool expanded = view == UnrollView::kFullyExpanded;
  switch (stmt->kind) {
    case StmtKind::kStore:
      return 1;
    case StmtKind::kSeq: {
      int64_t n = 0;
      for (const Stmt& s : stmt->seq) n += unrolled_work(s, view, simd_lanes);
      return n;
    }
    case StmtKind::kIf:
      if (expanded) return kUnrolledGuardWork;
      return unrolled_work(stmt->then_case, view, simd_lanes) +
             unrolled_work(stmt->else_case, view, simd_lanes);
    case StmtKind::kAllocate:
      return unrolled_work(stmt->body, view, simd_lanes);
    case StmtKind::kFor: {
      if (expanded) {
        if (stmt->loop_kind == LoopKind::kUnrolled && stmt->body->kind == StmtKind::kStore) {
          return 1;
        }
        return stmt->extent * unrolled_work(stmt->body, view, simd_lanes);
      }
      int64_t body = unrolled_work(stmt->body, view, simd_lanes);
      switch (stmt->loop_kind) {
        case LoopKind::kUnrolled:
          return stmt->extent * body;
        case LoopKind::kVectorized: {
          const int64_t simd = std::max(1, simd_lanes);
          return (stmt->extent + simd - 1) / simd * body;
        }
        case LoopKind::kSerial:
        case LoopKind::kParallel:
          return body;
      }
    }
  }
  return 0;
}

namespace {

// `stmt` with the variable `v` replaced by `value` everywhere; a Store's flat index is rebuilt
// from its substituted per-dimension indices where it has them.
Stmt substitute_in_nest(const Stmt& stmt, const ExprNode* v, const Expr& value) {
  if (!stmt.defined()) return stmt;
  auto sub = [&](const Expr& e) { return e.defined() ? substitute(e, v, value) : e; };
  switch (stmt->kind) {
    case StmtKind::kStore: {
      if (stmt->indices.empty()) return StoreFlat(stmt->buffer, sub(stmt->index), sub(stmt->value));
      std::vector<Expr> indices;
      for (const Expr& i : stmt->indices) indices.push_back(sub(i));
      return Store(stmt->buffer, indices, sub(stmt->value));
    }
    case StmtKind::kSeq: {
      std::vector<Stmt> seq;
      for (const Stmt& s : stmt->seq) seq.push_back(substitute_in_nest(s, v, value));
      return Seq(std::move(seq));
    }
    case StmtKind::kIf:
      return If(sub(stmt->condition), substitute_in_nest(stmt->then_case, v, value),
                substitute_in_nest(stmt->else_case, v, value));
    case StmtKind::kAllocate:
      return Allocate(stmt->buffer, substitute_in_nest(stmt->body, v, value));
    case StmtKind::kFor:
      return For(stmt->loop_var, stmt->extent, stmt->loop_kind,
                 substitute_in_nest(stmt->body, v, value));
  }
  return stmt;
}

// Nests within `limit` stay as they are; a larger one is cut down to at most `budget`.
Stmt shrink_unrolled(const Stmt& stmt, int64_t limit, int64_t budget, int simd_lanes);

Stmt shrink_children(const Stmt& stmt, int64_t limit, int64_t budget, int simd_lanes) {
  auto shrink = [&](const Stmt& s) { return shrink_unrolled(s, limit, budget, simd_lanes); };
  switch (stmt->kind) {
    case StmtKind::kStore:
      return stmt;
    case StmtKind::kSeq: {
      std::vector<Stmt> seq;
      for (const Stmt& s : stmt->seq) seq.push_back(shrink(s));
      return Seq(std::move(seq));
    }
    case StmtKind::kIf:
      return If(stmt->condition, shrink(stmt->then_case),
                stmt->else_case.defined() ? shrink(stmt->else_case) : Stmt());
    case StmtKind::kAllocate:
      return Allocate(stmt->buffer, shrink(stmt->body));
    case StmtKind::kFor:
      return For(stmt->loop_var, stmt->extent, stmt->loop_kind, shrink(stmt->body));
  }
  return stmt;
}

Stmt shrink_unrolled(const Stmt& stmt, int64_t limit, int64_t budget, int simd_lanes) {
  const auto work = [&](const Stmt& s) {
    return unrolled_work(s, UnrollView::kAsScheduled, simd_lanes);
  };
  if (!stmt.defined() || work(stmt) <= limit) return stmt;
  if (stmt->kind != StmtKind::kFor || stmt->loop_kind != LoopKind::kUnrolled) {
    return shrink_children(stmt, limit, budget, simd_lanes);
  }
  int64_t body_ops = std::max<int64_t>(1, work(stmt->body));
  if (body_ops > budget) {
    // Even one iteration is too large: this loop stays a loop, its body shrinks further.
    return For(stmt->loop_var, stmt->extent, LoopKind::kSerial,
               shrink_unrolled(stmt->body, budget, budget, simd_lanes));
  }
  int64_t inner = largest_divisor_at_most(stmt->extent, budget / body_ops);
  if (inner <= 1) return For(stmt->loop_var, stmt->extent, LoopKind::kSerial, stmt->body);
  // v = vo * inner + vi: the same iterations in the same order.
  const std::string& name = stmt->loop_var->name;
  Expr vo = var(name + ".o"), vi = var(name + ".i");
  Stmt body = substitute_in_nest(stmt->body, stmt->loop_var.get(), vo * Expr(inner) + vi);
  return For(vo, stmt->extent / inner, LoopKind::kSerial,
             For(vi, inner, LoopKind::kUnrolled, body));
}

// Whether a loop body's accesses index one of `locals` with the loop variable `v` (guards are
// not looked into: a guarded body is never unrolled here).
class IndexesLocal : public IRVisitor {
 public:
  IndexesLocal(const std::set<const BufferNode*>& locals, const ExprNode* v)
      : locals_(locals), v_(v) {}
  bool found = false;

 protected:
  void visit_store(const Stmt& s) override {
    check(s->buffer.get(), s->index);
    visit_exprs(s->value, [&](const Expr& e) {
      if (e->kind == ExprKind::kLoad) check(e->buffer.get(), e->a);
    });
  }
  void visit_if(const Stmt&) override {}

 private:
  void check(const BufferNode* buffer, const Expr& index) {
    found = found || (locals_.count(buffer) && uses_var(index, v_));
  }
  const std::set<const BufferNode*>& locals_;
  const ExprNode* v_;
};

class UnrollRegisterLocals : public IRMutator {
 public:
  UnrollRegisterLocals(int64_t register_floats, int64_t max_stores)
      : register_floats_(register_floats), max_stores_(max_stores) {}

  using IRMutator::mutate;
  // Only loop kinds change: expressions are kept as they are, without a walk through them.
  Expr mutate(const Expr& expr) override { return expr; }

 protected:
  Stmt mutate_allocate(const Stmt& s) override {
    const bool fits = s->buffer->num_elements() <= register_floats_;
    if (fits) locals_.insert(s->buffer.get());
    Stmt out = IRMutator::mutate_allocate(s);
    if (fits) locals_.erase(s->buffer.get());
    return out;
  }

  Stmt mutate_for(const Stmt& s) override {
    if (s->loop_kind != LoopKind::kSerial || s->extent <= 1 || !indexes_local(s) ||
        unrolled_work(s, UnrollView::kFullyExpanded, 0) > max_stores_) {
      return IRMutator::mutate_for(s);
    }
    return For(s->loop_var, s->extent, LoopKind::kUnrolled, mutate(s->body));
  }

 private:
  bool indexes_local(const Stmt& loop) const {
    if (locals_.empty()) return false;
    IndexesLocal walk(locals_, loop->loop_var.get());
    walk.visit(loop->body);
    return walk.found;
  }

  const int64_t register_floats_;
  const int64_t max_stores_;
  std::set<const BufferNode*> locals_;  // register-sized, allocated around the node mutated
};

}  // namespace

Stmt limit_unrolling(const Stmt& stmt, int64_t max_ops, int64_t reshaped_ops, int simd_lanes) {
  return shrink_unrolled(stmt, max_ops, std::min(max_ops, reshaped_ops), simd_lanes);
}

Stmt unroll_register_locals(const Stmt& stmt, int64_t register_floats, int64_t max_stores) {
  return UnrollRegisterLocals(register_floats, max_stores).mutate(stmt);
}

}  // namespace kiln::ir::passes
