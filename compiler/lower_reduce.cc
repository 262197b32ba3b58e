// ReduceSum and ReduceMean over any set of axes. The input's dimensions are coalesced into
// alternating runs of kept and reduced dimensions; then either
//  - the innermost run is reduced: each output (parallel) sums contiguous rows with SIMD partial
//    sums (row_reduce), one row per combination of the outer reduced runs; or
//  - the innermost run is kept: each block of outputs (parallel) is a vector accumulated in
//    place over every combination of the reduced runs.
#include <algorithm>
#include <set>

#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"

namespace kiln::compiler {

using frontend::Graph;
using frontend::Node;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

namespace {

struct Run {
  int64_t extent;
  bool reduced;
};

}  // namespace

Result<std::set<int64_t>> reduce_axes(const Graph& graph, const Node& node, int64_t rank) {
  std::vector<int64_t> axes = node.attr_ints("axes", {});
  bool given = node.attrs.count("axes") > 0;
  if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
    KILN_ASSIGN_OR_RETURN(axes, constant_ints(graph, node, node.inputs[1], "axes"));
    given = true;
  }
  std::set<int64_t> out;
  if (!given || axes.empty()) {
    if (node.attr_int("noop_with_empty_axes", 0) != 0) return out;
    for (int64_t a = 0; a < rank; ++a) out.insert(a);
    return out;
  }
  for (int64_t a : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, a, rank));
    out.insert(axis);
  }
  return out;
}

Result<ir::Program> lower_reduce(const Graph& graph, const Node& node,
                                 const ops::TargetInfo& target) {
  const bool mean = node.op_type == "ReduceMean";
  KILN_RETURN_IF_ERROR(check_float(graph, node, node.inputs.at(0)));
  const std::vector<int64_t>& shape = graph.tensor(node.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  KILN_ASSIGN_OR_RETURN(std::set<int64_t> axes, reduce_axes(graph, node, rank));
  ir::Buffer x = tensor_buffer(graph, node.inputs[0]);
  ir::Buffer y = tensor_buffer(graph, node.outputs.at(0));

  std::vector<Run> runs;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = axes.count(d) > 0;
    if (reduced) count *= shape[d];
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().reduced == reduced) {
      runs.back().extent *= shape[d];
    } else {
      runs.push_back({shape[d], reduced});
    }
  }
  if (y->num_elements() != x->num_elements() / std::max<int64_t>(count, 1)) {
    return inconsistent(
        node, "output shape " + frontend::dims_text(y->shape) + " does not match the reduction");
  }
  if (runs.empty()) runs.push_back({1, false});
  std::vector<int64_t> run_strides(runs.size(), 1);
  for (size_t i = runs.size(); i-- > 1;) run_strides[i - 1] = run_strides[i] * runs[i].extent;
  std::vector<int64_t> kept, reduced;
  for (const Run& r : runs) (r.reduced ? reduced : kept).push_back(r.extent);
  // The input's flat index from the coordinates of the kept and reduced runs, in order.
  auto input_index = [&](const std::vector<Expr>& k, const std::vector<Expr>& r) {
    Expr flat(0);
    size_t ki = 0, ri = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      flat = flat + (runs[i].reduced ? r[ri++] : k[ki++]) * Expr(run_strides[i]);
    }
    return flat;
  };
  const Expr scale = ir::f32(1.0 / static_cast<double>(std::max<int64_t>(count, 1)));

  Stmt body;
  if (runs.back().reduced) {
    // Each output reduces rows of the innermost run.
    const int64_t width = reduced.back();
    std::vector<int64_t> outer_reduced(reduced.begin(), reduced.end() - 1);
    Expr o = ir::var("out"), r = ir::var("r");
    std::vector<Expr> k = unfuse(o, kept);
    std::vector<Expr> rs = unfuse(r, outer_reduced);
    Stmt row = row_reduce(
        Combine::kSum, width, target,
        [&](const Expr& col) {
          std::vector<Expr> rc = rs;
          rc.push_back(col);
          return x.load_flat(input_index(k, rc));
        },
        y, o, y.load_flat(o));
    std::vector<Stmt> parts = {ir::StoreFlat(y, o, ir::f32(0)),
                               ir::For(r, product(outer_reduced), LoopKind::kSerial, row)};
    if (mean) parts.push_back(ir::StoreFlat(y, o, y.load_flat(o) * scale));
    body = ir::For(o, product(kept), LoopKind::kParallel, ir::Seq(std::move(parts)));
  } else {
    // Outputs along the innermost (kept) run are vector lanes, accumulated in place.
    const int64_t width = kept.back();
    std::vector<int64_t> outer_kept(kept.begin(), kept.end() - 1);
    body = parallel_blocks(
        product(outer_kept), width, [&](const Expr& row, const Expr& col0, int64_t block) {
          Expr r = ir::var("r");
          std::vector<Expr> rs = unfuse(r, reduced);
          auto out_at = [&](const Expr& col) { return row * Expr(width) + col; };
          std::vector<Stmt> parts;
          parts.push_back(vector_span(col0, block, target, [&](const Expr& col) {
            return ir::StoreFlat(y, out_at(col), ir::f32(0));
          }));
          parts.push_back(ir::For(r, product(reduced), LoopKind::kSerial,
                                  vector_span(col0, block, target, [&](const Expr& col) {
                                    std::vector<Expr> k = unfuse(row, outer_kept);
                                    k.push_back(col);
                                    return ir::StoreFlat(
                                        y, out_at(col),
                                        y.load_flat(out_at(col)) + x.load_flat(input_index(k, rs)));
                                  })));
          if (mean) {
            parts.push_back(vector_span(col0, block, target, [&](const Expr& col) {
              return ir::StoreFlat(y, out_at(col), y.load_flat(out_at(col)) * scale);
            }));
          }
          return ir::Seq(std::move(parts));
        });
  }
  return make_program(kernel_name(node), {x}, {y}, body);
}

}  // namespace kiln::compiler
