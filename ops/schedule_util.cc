#include "ops/schedule_util.h"

#include <algorithm>
#include <variant>

#include "ir/analysis.h"

namespace kiln::ops {

using ir::Expr;
using ir::LoopKind;
using ir::Stmt;
using ir::StmtKind;

Result<std::vector<int64_t>> tile_sizes(std::string_view tmpl, const ConfigEntity& config,
                                        std::string_view knob, int64_t length, size_t num_outputs) {
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string where = std::string(tmpl) + ": knob " + std::string(knob);
  const Entity* e = config.find(knob);
  const SplitEntity* split = e ? std::get_if<SplitEntity>(e) : nullptr;
  if (split == nullptr) return InstantiationError(where + " is missing or not a split");
  std::vector<int64_t> size = split->size;
  if (size.size() != num_outputs) {
    return InstantiationError(where + " has " + str(static_cast<int64_t>(size.size())) +
                              " sizes, expected " + str(static_cast<int64_t>(num_outputs)));
  }
  int64_t inner = 1;
  for (size_t i = 1; i < size.size(); ++i) {
    if (size[i] < 1 || size[i] > length || inner * size[i] > length) {
      return InstantiationError(where + " size " + str(size[i]) + " does not fit length " +
                                str(length));
    }
    inner *= size[i];
  }
  if (length % inner != 0 || (size[0] != -1 && size[0] != length / inner)) {
    return InstantiationError(where + " does not tile length " + str(length) + " exactly");
  }
  size[0] = length / inner;
  return size;
}

SplitOptions factor_splits(int num_outputs, std::function<bool(const SplitEntity&)> filter) {
  SplitOptions opts;
  opts.num_outputs = num_outputs;
  opts.filter = std::move(filter);
  return opts;
}

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

int64_t vector_ops(int64_t lanes, const TargetInfo& target) {
  int64_t simd = std::max(1, target.simd_lanes);
  return (lanes + simd - 1) / simd;
}

int64_t unrolled_vector_ops(const Stmt& stmt, const TargetInfo& target) {
  if (!stmt.defined()) return 0;
  switch (stmt->kind) {
    case StmtKind::kStore:
      return 1;
    case StmtKind::kSeq: {
      int64_t n = 0;
      for (const Stmt& s : stmt->seq) n += unrolled_vector_ops(s, target);
      return n;
    }
    case StmtKind::kIf:
      return unrolled_vector_ops(stmt->then_case, target) +
             unrolled_vector_ops(stmt->else_case, target);
    case StmtKind::kAllocate:
      return unrolled_vector_ops(stmt->body, target);
    case StmtKind::kFor: {
      int64_t body = unrolled_vector_ops(stmt->body, target);
      switch (stmt->loop_kind) {
        case LoopKind::kUnrolled:
          return stmt->extent * body;
        case LoopKind::kVectorized:
          return vector_ops(stmt->extent, target) * body;
        case LoopKind::kSerial:
        case LoopKind::kParallel:
          return body;
      }
    }
  }
  return 0;
}

namespace {

// `stmt` with the variable `v` replaced by `value` everywhere.
Stmt substitute(const Stmt& stmt, const ir::ExprNode* v, const Expr& value) {
  if (!stmt.defined()) return stmt;
  auto sub = [&](const Expr& e) { return e.defined() ? ir::substitute(e, v, value) : e; };
  switch (stmt->kind) {
    case StmtKind::kStore: {
      if (stmt->indices.empty())
        return ir::StoreFlat(stmt->buffer, sub(stmt->index), sub(stmt->value));
      std::vector<Expr> indices;
      for (const Expr& i : stmt->indices) indices.push_back(sub(i));
      return ir::Store(stmt->buffer, indices, sub(stmt->value));
    }
    case StmtKind::kSeq: {
      std::vector<Stmt> seq;
      for (const Stmt& s : stmt->seq) seq.push_back(substitute(s, v, value));
      return ir::Seq(std::move(seq));
    }
    case StmtKind::kIf:
      return ir::If(sub(stmt->condition), substitute(stmt->then_case, v, value),
                    substitute(stmt->else_case, v, value));
    case StmtKind::kAllocate:
      return ir::Allocate(stmt->buffer, substitute(stmt->body, v, value));
    case StmtKind::kFor:
      return ir::For(stmt->loop_var, stmt->extent, stmt->loop_kind,
                     substitute(stmt->body, v, value));
  }
  return stmt;
}

// Nests within `limit` stay as they are; a larger one is cut down to at most `budget`.
Stmt shrink_unrolled(const Stmt& stmt, int64_t limit, int64_t budget, const TargetInfo& target);

Stmt shrink_children(const Stmt& stmt, int64_t limit, int64_t budget, const TargetInfo& target) {
  auto shrink = [&](const Stmt& s) { return shrink_unrolled(s, limit, budget, target); };
  switch (stmt->kind) {
    case StmtKind::kStore:
      return stmt;
    case StmtKind::kSeq: {
      std::vector<Stmt> seq;
      for (const Stmt& s : stmt->seq) seq.push_back(shrink(s));
      return ir::Seq(std::move(seq));
    }
    case StmtKind::kIf:
      return ir::If(stmt->condition, shrink(stmt->then_case),
                    stmt->else_case.defined() ? shrink(stmt->else_case) : Stmt());
    case StmtKind::kAllocate:
      return ir::Allocate(stmt->buffer, shrink(stmt->body));
    case StmtKind::kFor:
      return ir::For(stmt->loop_var, stmt->extent, stmt->loop_kind, shrink(stmt->body));
  }
  return stmt;
}

Stmt shrink_unrolled(const Stmt& stmt, int64_t limit, int64_t budget, const TargetInfo& target) {
  if (!stmt.defined() || unrolled_vector_ops(stmt, target) <= limit) return stmt;
  if (stmt->kind != StmtKind::kFor || stmt->loop_kind != LoopKind::kUnrolled) {
    return shrink_children(stmt, limit, budget, target);
  }
  int64_t body_ops = std::max<int64_t>(1, unrolled_vector_ops(stmt->body, target));
  if (body_ops > budget) {
    // Even one iteration is too large: this loop stays a loop, its body shrinks further.
    return ir::For(stmt->loop_var, stmt->extent, LoopKind::kSerial,
                   shrink_unrolled(stmt->body, budget, budget, target));
  }
  int64_t inner = largest_divisor_at_most(stmt->extent, budget / body_ops);
  if (inner <= 1) return ir::For(stmt->loop_var, stmt->extent, LoopKind::kSerial, stmt->body);
  // v = vo * inner + vi: the same iterations in the same order.
  const std::string& name = stmt->loop_var->name;
  Expr vo = ir::var(name + ".o"), vi = ir::var(name + ".i");
  Stmt body = substitute(stmt->body, stmt->loop_var.get(), vo * Expr(inner) + vi);
  return ir::For(vo, stmt->extent / inner, LoopKind::kSerial,
                 ir::For(vi, inner, LoopKind::kUnrolled, body));
}

}  // namespace

Stmt limit_unrolling(const Stmt& stmt, int64_t max_ops, int64_t reshaped_ops,
                     const TargetInfo& target) {
  return shrink_unrolled(stmt, max_ops, std::min(max_ops, reshaped_ops), target);
}

std::vector<int64_t> fit_tile(const std::vector<int64_t>& dims, int64_t max_elements) {
  std::vector<int64_t> sub(dims.size(), 1);
  int64_t elements = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    sub[i] = largest_divisor_at_most(dims[i], max_elements / elements);
    elements *= sub[i];
  }
  return sub;
}

SerialBlocks::SerialBlocks(const std::string& name, int64_t count)
    : index(count > 1 ? ir::var(name) : Expr(0)), count(count) {}

Stmt SerialBlocks::wrap(Stmt body) const {
  if (count <= 1) return body;
  return ir::For(index, count, LoopKind::kSerial, std::move(body));
}

}  // namespace kiln::ops
