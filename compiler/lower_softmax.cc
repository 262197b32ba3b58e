// Softmax, numerically stable: y = exp(x - max) / sum(exp(x - max)) along the softmax axis.
// Opsets 11-12 flatten the input at `axis` (default 1) and normalize each row of the 2-D view;
// opset 13+ normalizes along `axis` alone (default -1). With a contiguous axis each row is one
// parallel task using SIMD row reductions; otherwise the columns after the axis are vector lanes
// with per-column max and sum in local buffers.
#include <algorithm>
#include <limits>

#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"

namespace kiln::compiler {

using frontend::Graph;
using frontend::Node;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

namespace {

// Columns per task when the axis is not innermost: two local vectors of this many floats.
constexpr int64_t kMaxColumnsPerTask = 1024;

}  // namespace

Result<ir::Program> lower_softmax(const Graph& graph, const Node& node,
                                  const ops::TargetInfo& target) {
  KILN_RETURN_IF_ERROR(check_float(graph, node, node.inputs.at(0)));
  const std::vector<int64_t>& shape = graph.tensor(node.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return inconsistent(node, "a scalar input");
  const bool flatten = graph.opset < 13;
  KILN_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(node, node.attr_int("axis", flatten ? 1 : -1), rank));
  const int64_t outer = product(std::vector<int64_t>(shape.begin(), shape.begin() + axis));
  int64_t n = shape[axis];
  int64_t inner = product(std::vector<int64_t>(shape.begin() + axis + 1, shape.end()));
  if (flatten) {
    n *= inner;
    inner = 1;
  }
  ir::Buffer x = tensor_buffer(graph, node.inputs[0]);
  ir::Buffer y = tensor_buffer(graph, node.outputs.at(0));
  if (y->num_elements() != x->num_elements()) return inconsistent(node, "output size differs");
  const Expr neg_inf = ir::f32(-std::numeric_limits<float>::infinity());

  Stmt body;
  if (inner == 1) {
    Expr row = ir::var("row");
    ir::Buffer stat("stat", {2}, ir::BufferScope::kLocal);  // max, then 1 / sum
    auto at = [&](const Expr& col) { return row * Expr(n) + col; };
    Stmt max = row_reduce(
        Combine::kMax, n, target, [&](const Expr& col) { return x.load_flat(at(col)); }, stat,
        Expr(0), neg_inf);
    Stmt exp = vector_span(Expr(0), n, target, [&](const Expr& col) {
      return ir::StoreFlat(y, at(col), ir::exp(x.load_flat(at(col)) - stat.load({0})));
    });
    Stmt sum = row_reduce(
        Combine::kSum, n, target, [&](const Expr& col) { return y.load_flat(at(col)); }, stat,
        Expr(1), ir::f32(0));
    Stmt inv = ir::Store(stat, {1}, ir::f32(1) / stat.load({1}));
    Stmt scale = vector_span(Expr(0), n, target, [&](const Expr& col) {
      return ir::StoreFlat(y, at(col), y.load_flat(at(col)) * stat.load({1}));
    });
    body = ir::For(row, outer, LoopKind::kParallel,
                   ir::Allocate(stat, ir::Seq({max, exp, sum, inv, scale})));
  } else {
    body = parallel_blocks(
        outer, inner,
        [&](const Expr& row, const Expr& col0, int64_t width) {
          ir::Buffer mx("mx", {width}, ir::BufferScope::kLocal);
          ir::Buffer sm("sm", {width}, ir::BufferScope::kLocal);
          Expr a = ir::var("a");
          auto at = [&](const Expr& k, const Expr& c) {
            return (row * Expr(n) + k) * Expr(inner) + col0 + c;
          };
          auto span = [&](const ColumnBody& f) { return vector_span(Expr(0), width, target, f); };
          std::vector<Stmt> parts;
          parts.push_back(
              span([&](const Expr& c) { return ir::Store(mx, {c}, x.load_flat(at(Expr(0), c))); }));
          parts.push_back(ir::For(a, n - 1, LoopKind::kSerial, span([&](const Expr& c) {
                                    return ir::Store(
                                        mx, {c}, ir::max(mx.load({c}), x.load_flat(at(a + 1, c))));
                                  })));
          parts.push_back(span([&](const Expr& c) { return ir::Store(sm, {c}, ir::f32(0)); }));
          parts.push_back(ir::For(a, n, LoopKind::kSerial, span([&](const Expr& c) {
                                    Expr e = ir::exp(x.load_flat(at(a, c)) - mx.load({c}));
                                    return ir::Seq(
                                        {ir::StoreFlat(y, at(a, c), e),
                                         ir::Store(sm, {c}, sm.load({c}) + y.load_flat(at(a, c)))});
                                  })));
          parts.push_back(
              span([&](const Expr& c) { return ir::Store(sm, {c}, ir::f32(1) / sm.load({c})); }));
          parts.push_back(ir::For(a, n, LoopKind::kSerial, span([&](const Expr& c) {
                                    return ir::StoreFlat(y, at(a, c),
                                                         y.load_flat(at(a, c)) * sm.load({c}));
                                  })));
          return ir::Allocate(mx, ir::Allocate(sm, ir::Seq(std::move(parts))));
        },
        kMaxColumnsPerTask);
  }
  return make_program(kernel_name(node), {x}, {y}, body);
}

}  // namespace kiln::compiler
