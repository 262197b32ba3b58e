#include "ir/passes/simd_legality.h"

#include <map>
#include <string>
#include <vector>

#include "ir/analysis.h"
#include "ir/printer.h"

namespace kiln::ir::passes {

namespace {

// Appends the stores of a straight-line body to `out`; false if it is not straight-line.
bool collect_straight_line_stores(const Stmt& s, std::vector<Stmt>* out) {
  if (s->kind == StmtKind::kStore) {
    out->push_back(s);
    return true;
  }
  if (s->kind != StmtKind::kSeq) return false;
  for (const Stmt& c : s->seq) {
    if (!collect_straight_line_stores(c, out)) return false;
  }
  return true;
}

}  // namespace

bool simd_safe(const Stmt& loop) {
  if (loop->extent > 64) return false;
  std::vector<Stmt> stores;
  if (!collect_straight_line_stores(loop->body, &stores)) return false;
  const ExprNode* v = loop->loop_var.get();
  std::map<const BufferNode*, std::string> written;
  for (const Stmt& st : stores) {
    auto c = linear_coefficient(st->index, v);
    if (!c || *c == 0) return false;
    std::string index = to_string(st->index);
    auto [it, fresh] = written.emplace(st->buffer.get(), index);
    if (!fresh && it->second != index) return false;
  }
  bool ok = true;
  for (const Stmt& st : stores) {
    visit_exprs(st->value, [&](const Expr& e) {
      if (e->kind != ExprKind::kLoad) return;
      auto it = written.find(e->buffer.get());
      if (it != written.end() && it->second != to_string(e->a)) ok = false;
    });
    visit_exprs(st->index, [&](const Expr& e) {
      if (e->kind == ExprKind::kLoad) ok = false;
    });
  }
  return ok;
}

SimdLoops find_simd_loops(const Stmt& stmt) {
  SimdLoops found;
  visit_loops(stmt, [&](const Stmt& loop) {
    const bool simd =
        loop->loop_kind == LoopKind::kVectorized && loop->extent > 1 && simd_safe(loop);
    if (simd) found.insert(loop.get());
    return simd;  // its body is straight-line
  });
  return found;
}

}  // namespace kiln::ir::passes
