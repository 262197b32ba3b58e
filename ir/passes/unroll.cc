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

namespace {

// unrolled_work's count, one hook per statement kind (the table ir/kinds.h generates).
class UnrolledWork {
 public:
  UnrolledWork(UnrollView view, int simd_lanes)
      : expanded_(view == UnrollView::kFullyExpanded), simd_lanes_(simd_lanes) {}

  int64_t count(const Stmt& stmt) {
    static constexpr int64_t (UnrolledWork::*kHooks[])(const Stmt&) =
        KILN_IR_STMT_HOOK_TABLE(UnrolledWork, count_);
    return stmt.defined() ? call_hook(*this, kHooks, stmt) : 0;
  }

 private:
  int64_t count_store(const Stmt&) { return 1; }
  int64_t count_seq(const Stmt& stmt) {
    int64_t n = 0;
    for (const Stmt& s : stmt->seq) n += count(s);
    return n;
  }
  int64_t count_if(const Stmt& stmt) {
    if (expanded_) return kUnrolledGuardWork;
    return count(stmt->then_case) + count(stmt->else_case);
  }
  int64_t count_allocate(const Stmt& stmt) { return count(stmt->body); }
  int64_t count_let(const Stmt& stmt) { return count(stmt->body); }
  int64_t count_for(const Stmt& stmt) {
    if (expanded_) {
      if (stmt->loop_kind == LoopKind::kUnrolled && stmt->body->kind == StmtKind::kStore) return 1;
      return stmt->extent * count(stmt->body);
    }
    int64_t body = count(stmt->body);
    switch (stmt->loop_kind) {
      case LoopKind::kUnrolled:
        return stmt->extent * body;
      case LoopKind::kVectorized: {
        const int64_t simd = std::max(1, simd_lanes_);
        return (stmt->extent + simd - 1) / simd * body;
      }
      case LoopKind::kSerial:
      case LoopKind::kParallel:
        return body;
    }
    return 0;
  }

  const bool expanded_;
  const int simd_lanes_;
};

// Cuts down the nests over `limit_` to at most `budget_` (limit_unrolling): nodes within the
// limit are kept as they are, the others rebuilt around their shrunk children, except an
// unrolled loop over the limit, which becomes serial loops around an unrolled part that fits.
class ShrinkUnrolled : public IRMutator {
 public:
  ShrinkUnrolled(int64_t limit, int64_t budget, int simd_lanes)
      : limit_(limit), budget_(budget), simd_lanes_(simd_lanes) {}

  using IRMutator::mutate;
  // Only loops change: expressions are kept as they are, without a walk through them.
  Expr mutate(const Expr& expr) override { return expr; }
  Stmt mutate(const Stmt& stmt) override {
    if (!stmt.defined() || work(stmt) <= limit_) return stmt;
    return IRMutator::mutate(stmt);
  }

 protected:
  Stmt mutate_for(const Stmt& stmt) override {
    if (stmt->loop_kind != LoopKind::kUnrolled) return IRMutator::mutate_for(stmt);
    int64_t body_ops = std::max<int64_t>(1, work(stmt->body));
    if (body_ops > budget_) {
      // Even one iteration is too large: this loop stays a loop, its body shrinks further.
      return For(stmt->loop_var, stmt->extent, LoopKind::kSerial,
                 ShrinkUnrolled(budget_, budget_, simd_lanes_).mutate(stmt->body));
    }
    int64_t inner = largest_divisor_at_most(stmt->extent, budget_ / body_ops);
    if (inner <= 1) return For(stmt->loop_var, stmt->extent, LoopKind::kSerial, stmt->body);
    // v = vo * inner + vi: the same iterations in the same order.
    const std::string& name = stmt->loop_var->name;
    Expr vo = var(name + ".o"), vi = var(name + ".i");
    Stmt body = substitute(stmt->body, stmt->loop_var.get(), vo * Expr(inner) + vi);
    return For(vo, stmt->extent / inner, LoopKind::kSerial,
               For(vi, inner, LoopKind::kUnrolled, body));
  }

 private:
  int64_t work(const Stmt& stmt) const {
    return unrolled_work(stmt, UnrollView::kAsScheduled, simd_lanes_);
  }

  const int64_t limit_;
  const int64_t budget_;
  const int simd_lanes_;
};

}  // namespace

int64_t unrolled_work(const Stmt& stmt, UnrollView view, int simd_lanes) {
  return UnrolledWork(view, simd_lanes).count(stmt);
}

namespace {

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
    visit(s->value);
  }
  void visit_load(const Expr& e) override {
    check(e->buffer.get(), e->a);
    IRVisitor::visit_load(e);
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
  return ShrinkUnrolled(max_ops, std::min(max_ops, reshaped_ops), simd_lanes).mutate(stmt);
}

Stmt unroll_register_locals(const Stmt& stmt, int64_t register_floats, int64_t max_stores) {
  return UnrollRegisterLocals(register_floats, max_stores).mutate(stmt);
}

}  // namespace kiln::ir::passes
