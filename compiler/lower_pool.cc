// Pooling over NCHW (and NCW as H = 1). Each parallel task computes one output row.
//  - Rows whose window rows all lie inside the input (the interior): each output is one
//    expression over its taps, kept in registers; the columns whose window is inside the input
//    are one span (vectorized when the stride is 1: measured, gathers for stride 2 were 3.7x
//    slower than the scalar loop), the few border columns one store each with the taps they
//    have and their own count.
//  - Border rows: the row starts at the identity, every kernel tap adds one pass over the
//    columns whose tap is inside the input (no bounds test inside a pass), and AveragePool then
//    scales by the reciprocal of each window's count.
#include <algorithm>
#include <functional>
#include <limits>

#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"
#include "compiler/pool_geometry.h"

namespace kiln::compiler {

using frontend::Graph;
using frontend::Node;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

namespace {

// Columns [lo, hi) of a row: vectorized when `contiguous`, a scalar loop otherwise.
Stmt column_loop(int64_t lo, int64_t hi, bool contiguous, const ops::TargetInfo& target,
                 const ColumnBody& body) {
  if (hi <= lo) return ir::Seq({});
  if (contiguous) return vector_span(Expr(lo), hi - lo, target, body);
  Expr q = ir::var("q");
  return ir::For(q, hi - lo, LoopKind::kSerial, body(Expr(lo) + q));
}

Result<ir::Program> lower_window_pool(const Graph& graph, const Node& node,
                                      const ops::TargetInfo& target) {
  const bool is_max = node.op_type == "MaxPool";
  if (node.outputs.size() > 1 && !node.outputs[1].empty()) {
    return unsupported(node, "the Indices output of MaxPool");
  }
  const std::vector<int64_t>& in_shape = graph.tensor(node.inputs.at(0)).shape;
  const std::vector<int64_t>& out_shape = graph.tensor(node.outputs.at(0)).shape;
  if (in_shape.size() != 3 && in_shape.size() != 4) {
    return unsupported(node, "pooling over " + std::to_string(in_shape.size()) +
                                 "-D tensors (kiln pools NCW and NCHW)");
  }
  if (out_shape.size() != in_shape.size() || out_shape[0] != in_shape[0] ||
      out_shape[1] != in_shape[1]) {
    return inconsistent(node, "output shape " + frontend::dims_text(out_shape) +
                                  " does not match input " + frontend::dims_text(in_shape));
  }
  const size_t spatial = in_shape.size() - 2;
  Axis h, w;
  if (spatial == 2) {
    KILN_ASSIGN_OR_RETURN(h, make_axis(node, 0, 2, in_shape[2], out_shape[2]));
    KILN_ASSIGN_OR_RETURN(w, make_axis(node, 1, 2, in_shape[3], out_shape[3]));
  } else {
    KILN_ASSIGN_OR_RETURN(w, make_axis(node, 0, 1, in_shape[2], out_shape[2]));
  }
  if (!is_max && (h.dilation != 1 || w.dilation != 1)) {
    return unsupported(node, "AveragePool with dilations");
  }
  const bool include_pad = !is_max && node.attr_int("count_include_pad", 0) != 0;

  ir::Buffer x = tensor_buffer(graph, node.inputs[0]);
  ir::Buffer y = tensor_buffer(graph, node.outputs[0]);
  const int64_t planes = in_shape[0] * in_shape[1];
  auto combine = [&](const Expr& a, const Expr& b) { return is_max ? ir::max(a, b) : a + b; };
  // Rows and columns whose window lies inside the input: [first, last).
  auto inside = [](const Axis& a) {
    int64_t first = a.out, last = a.out;
    for (int64_t o = 0; o < a.out; ++o) {
      if (a.taps_within(o, 0, a.in) != a.kernel) continue;
      if (first == a.out) first = o;
      last = o + 1;
    }
    if (first == a.out) last = first;
    return std::pair<int64_t, int64_t>{first, last};
  };

  // Output row oh of plane `plane`, any row: the row starts at the identity and each kernel tap
  // adds one pass over the columns it reads inside the input; AveragePool then scales.
  auto generic_row = [&](const Expr& plane, const Expr& oh) {
    const Expr out_row = (plane * Expr(h.out) + oh) * Expr(w.out);
    const Expr in_plane = plane * Expr(h.in * w.in);
    auto out_at = [&](const Expr& ow) { return out_row + ow; };
    std::vector<Stmt> row;
    const Expr identity = is_max ? ir::f32(-std::numeric_limits<float>::infinity()) : ir::f32(0);
    row.push_back(vector_span(Expr(0), w.out, target, [&](const Expr& ow) {
      return ir::StoreFlat(y, out_at(ow), identity);
    }));
    Expr kh = ir::var("kh");
    Expr ih = oh * Expr(h.stride) - Expr(h.pad_begin) + kh * Expr(h.dilation);
    std::vector<Stmt> taps;
    for (int64_t kw = 0; kw < w.kernel; ++kw) {
      auto [lo, hi] = w.valid_outputs(kw);
      taps.push_back(column_loop(lo, hi, w.stride == 1, target, [&](const Expr& ow) {
        Expr iw = ow * Expr(w.stride) - Expr(w.pad_begin) + Expr(kw * w.dilation);
        return ir::StoreFlat(
            y, out_at(ow),
            combine(y.load_flat(out_at(ow)), x.load_flat(in_plane + ih * Expr(w.in) + iw)));
      }));
    }
    Stmt tap_row = ir::If(Expr(0) <= ih && ih < Expr(h.in), ir::Seq(std::move(taps)));
    row.push_back(ir::For(kh, h.kernel, LoopKind::kSerial, tap_row));
    if (!is_max) {
      Expr row_scale = window_scale(h, include_pad, oh);
      auto scale = [&](const Expr& ow, const Expr& s) {
        return ir::StoreFlat(y, out_at(ow), y.load_flat(out_at(ow)) * (row_scale * s));
      };
      // Columns whose count is whole form one range; the others are few.
      int64_t first = w.out, last = -1;
      for (int64_t o = 0; o < w.out; ++o) {
        if (w.window_count(o, include_pad) == w.kernel) {
          first = std::min(first, o);
          last = o;
        }
      }
      for (int64_t o = 0; o < w.out; ++o) {
        if (o >= first && o <= last) continue;
        row.push_back(scale(Expr(o), ir::f32(1.0 / w.window_count(o, include_pad))));
      }
      if (last >= first) {
        row.push_back(vector_span(Expr(first), last - first + 1, target, [&](const Expr& ow) {
          return scale(ow, ir::f32(1.0 / static_cast<double>(w.kernel)));
        }));
      }
    }
    return ir::Seq(std::move(row));
  };

  // Output row oh whose window rows all lie inside the input: each output is one expression
  // over its taps (in registers), the columns inside the input as one span, the border columns
  // one by one with the taps they have.
  auto interior_row = [&](const Expr& plane, const Expr& oh) {
    const Expr out_row = (plane * Expr(h.out) + oh) * Expr(w.out);
    const Expr in_plane = plane * Expr(h.in * w.in);
    auto window = [&](const Expr& ow, int64_t kw_lo, int64_t kw_hi) {
      Expr v;
      for (int64_t kh = 0; kh < h.kernel; ++kh) {
        Expr ih = oh * Expr(h.stride) + Expr(kh * h.dilation - h.pad_begin);
        for (int64_t kw = kw_lo; kw < kw_hi; ++kw) {
          Expr iw = ow * Expr(w.stride) + Expr(kw * w.dilation - w.pad_begin);
          Expr tap = x.load_flat(in_plane + ih * Expr(w.in) + iw);
          v = v.defined() ? combine(v, tap) : tap;
        }
      }
      return v;
    };
    std::vector<Stmt> row;
    auto [first, last] = inside(w);
    for (int64_t o = 0; o < w.out; ++o) {
      if (o >= first && o < last) continue;
      // The taps of column o inside the input: a contiguous range of kw.
      int64_t kw_lo = w.kernel, kw_hi = 0;
      for (int64_t kw = 0; kw < w.kernel; ++kw) {
        int64_t iw = o * w.stride - w.pad_begin + kw * w.dilation;
        if (iw >= 0 && iw < w.in) {
          kw_lo = std::min(kw_lo, kw);
          kw_hi = kw + 1;
        }
      }
      Expr v = window(Expr(o), kw_lo, kw_hi);
      if (!is_max) {
        v = v * ir::f32(1.0 / static_cast<double>(h.kernel * w.window_count(o, include_pad)));
      }
      row.push_back(ir::StoreFlat(y, out_row + Expr(o), v));
    }
    row.push_back(column_loop(first, last, w.stride == 1, target, [&](const Expr& ow) {
      Expr v = window(ow, 0, w.kernel);
      if (!is_max) v = v * ir::f32(1.0 / static_cast<double>(h.kernel * w.kernel));
      return ir::StoreFlat(y, out_row + ow, v);
    }));
    return ir::Seq(std::move(row));
  };

  // Parallel loops over (plane, row) for the rows [lo, hi).
  std::vector<Stmt> loops;
  auto rows = [&](int64_t lo, int64_t hi, const std::function<Stmt(Expr, Expr)>& row) {
    if (hi <= lo) return;
    const int64_t n = hi - lo;
    Expr f = ir::var("row");
    Expr plane = n == 1 ? f : f / Expr(n);
    Expr oh = Expr(lo) + (n == 1 ? Expr(0) : f % Expr(n));
    loops.push_back(ir::For(f, planes * n, LoopKind::kParallel, row(plane, oh)));
  };
  auto [top, bottom] = inside(h);
  rows(0, top, generic_row);
  rows(top, bottom, interior_row);
  rows(bottom, h.out, generic_row);
  return make_program(kernel_name(node), {x}, {y}, ir::Seq(std::move(loops)));
}

Result<ir::Program> lower_global_average_pool(const Graph& graph, const Node& node,
                                              const ops::TargetInfo& target) {
  const std::vector<int64_t>& in_shape = graph.tensor(node.inputs.at(0)).shape;
  if (in_shape.size() < 3) return inconsistent(node, "input of rank < 3");
  ir::Buffer x = tensor_buffer(graph, node.inputs[0]);
  ir::Buffer y = tensor_buffer(graph, node.outputs.at(0));
  if (y->num_elements() != in_shape[0] * in_shape[1]) {
    return inconsistent(node, "output is not N x C");
  }
  const int64_t planes = in_shape[0] * in_shape[1];
  const int64_t size = product(std::vector<int64_t>(in_shape.begin() + 2, in_shape.end()));
  Expr p = ir::var("plane");
  Stmt sum = row_reduce(
      Combine::kSum, size, target, [&](const Expr& i) { return x.load_flat(p * Expr(size) + i); },
      y, p, ir::f32(0));
  Stmt mean = ir::StoreFlat(y, p, y.load_flat(p) * ir::f32(1.0 / static_cast<double>(size)));
  Stmt body = ir::For(p, planes, LoopKind::kParallel, ir::Seq({sum, mean}));
  return make_program(kernel_name(node), {x}, {y}, body);
}

}  // namespace

Result<ir::Program> lower_pool(const Graph& graph, const Node& node,
                               const ops::TargetInfo& target) {
  KILN_RETURN_IF_ERROR(check_float(graph, node, node.inputs.at(0)));
  if (node.op_type == "GlobalAveragePool") return lower_global_average_pool(graph, node, target);
  return lower_window_pool(graph, node, target);
}

}  // namespace kiln::compiler
