#include "ir/passes/expand_unrolled.h"

#include <utility>
#include <vector>

#include "ir/analysis.h"

namespace kiln::ir::passes {

namespace {

class Expander {
 public:
  explicit Expander(const OrderedReductions& reductions) : reductions_(reductions) {}

  OrderedReductions take_reductions() { return std::move(out_reductions_); }

  Stmt expand(const Stmt& stmt) {
    if (!stmt.defined()) return stmt;
    switch (stmt->kind) {
      case StmtKind::kFor:
        return expand_for(stmt);
      case StmtKind::kStore:
        return substitute(stmt, constants_);
      case StmtKind::kSeq: {
        std::vector<Stmt> list;
        bool changed = false;
        for (const Stmt& s : stmt->seq) {
          Stmt e = expand(s);
          changed = changed || !e.same_as(s) || e->kind == StmtKind::kSeq;
          append_flattened(&list, e);
        }
        if (!changed) return stmt;
        return Seq(std::move(list));
      }
      case StmtKind::kIf: {
        Expr condition = substitute(stmt->condition, constants_);
        Stmt then_case = expand(stmt->then_case), else_case = expand(stmt->else_case);
        if (condition.same_as(stmt->condition) && then_case.same_as(stmt->then_case) &&
            else_case.same_as(stmt->else_case)) {
          return stmt;
        }
        return If(std::move(condition), std::move(then_case), std::move(else_case));
      }
      case StmtKind::kAllocate: {
        Stmt body = expand(stmt->body);
        return body.same_as(stmt->body) ? stmt : Allocate(stmt->buffer, std::move(body));
      }
      case StmtKind::kLet: {
        Expr value = substitute(stmt->value, constants_);
        Stmt body = expand(stmt->body);
        if (value.same_as(stmt->value) && body.same_as(stmt->body)) return stmt;
        return Let(stmt->loop_var, std::move(value), std::move(body));
      }
    }
    return stmt;
  }

 private:
  Stmt expand_for(const Stmt& loop) {
    auto reduction = reductions_.find(loop.get());
    if (reduction != reductions_.end()) {
      // A node of its own per occurrence, even where nothing is substituted: the map is keyed by
      // node, and the passes after this one may rewrite occurrences differently.
      Stmt copy =
          For(loop->loop_var, loop->extent, loop->loop_kind, substitute(loop->body, constants_));
      out_reductions_.emplace(
          copy.get(), OrderedReduction{substitute(reduction->second.accumulator, constants_),
                                       substitute(reduction->second.addend, constants_)});
      return copy;
    }
    if (loop->loop_kind == LoopKind::kUnrolled || loop->extent <= 1) {
      std::vector<Stmt> list;
      const ExprNode* v = loop->loop_var.get();
      for (int64_t i = 0; i < loop->extent; ++i) {
        constants_[v] = Expr(i);
        append_flattened(&list, expand(loop->body));
      }
      constants_.erase(v);
      return Seq(std::move(list));
    }
    Stmt body = expand(loop->body);
    if (body.same_as(loop->body)) return loop;
    StmtNode n = *loop.get();
    n.body = std::move(body);
    return make_stmt(std::move(n));
  }

  const OrderedReductions& reductions_;
  OrderedReductions out_reductions_;
  VarMap constants_;  // the variables of the loops being expanded, at their current iteration
};

}  // namespace

ExpandedStmt expand_unrolled(const Stmt& stmt, const OrderedReductions& reductions) {
  Expander expander(reductions);
  Stmt body = expander.expand(stmt);
  return {std::move(body), expander.take_reductions()};
}

}  // namespace kiln::ir::passes
