#include "ir/passes/ordered_reduction.h"

#include <optional>
#include <string>

#include "ir/analysis.h"
#include "ir/printer.h"

namespace kiln::ir::passes {

namespace {

// The reduction `loop` is, if it is one.
std::optional<OrderedReduction> match_ordered_reduction(const Stmt& loop) {
  if (loop->loop_kind != LoopKind::kUnrolled || loop->extent <= 1 || loop->extent > 1024) {
    return std::nullopt;
  }
  const Stmt& store = loop->body;
  const ExprNode* v = loop->loop_var.get();
  if (store->kind != StmtKind::kStore || uses_var(store->index, v) ||
      store->value->kind != ExprKind::kAdd) {
    return std::nullopt;
  }
  const std::string target_index = to_string(store->index);
  auto is_target = [&](const Expr& e) {
    return e->kind == ExprKind::kLoad && e->buffer.get() == store->buffer.get() &&
           to_string(e->a) == target_index;
  };
  const Expr& a = store->value->a;
  const Expr& b = store->value->b;
  const bool target_first = is_target(a);
  if (!target_first && !is_target(b)) return std::nullopt;
  OrderedReduction r{target_first ? a : b, target_first ? b : a};
  if (r.addend->kind != ExprKind::kLoad || r.addend->buffer.get() == store->buffer.get() ||
      linear_coefficient(r.addend->a, v) != std::optional<int64_t>(1)) {
    return std::nullopt;
  }
  return r;
}

}  // namespace

OrderedReductions find_ordered_reductions(const Stmt& stmt) {
  OrderedReductions found;
  visit_loops(stmt, [&](const Stmt& loop) {
    std::optional<OrderedReduction> r = match_ordered_reduction(loop);
    if (!r) return false;
    found.emplace(loop.get(), std::move(*r));
    return true;  // its body is one store
  });
  return found;
}

}  // namespace kiln::ir::passes
