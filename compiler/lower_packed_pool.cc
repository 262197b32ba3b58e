#include "compiler/lower_packed_pool.h"

#include <limits>
#include <set>
#include <string>

#include "compiler/lowerings.h"
#include "compiler/pool_geometry.h"

namespace kiln::compiler {

namespace {

using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

Stmt lanes(const Expr& v, int64_t b, Stmt body) {
  return ir::For(v, b, LoopKind::kVectorized, body);
}

// MaxPool, or AveragePool (the sum of the taps inside the input over the window's count).
Result<ir::Program> packed_window_pool(const frontend::Graph& graph, const frontend::Node& node,
                                       const std::vector<int64_t>& in_shape) {
  const bool is_max = node.op_type == "MaxPool";
  const bool include_pad = !is_max && node.attr_int("count_include_pad", 0) != 0;
  const std::vector<int64_t>& out_nchw = graph.tensor(node.outputs[0]).shape;
  KILN_ASSIGN_OR_RETURN(Axis ah, make_axis(node, 0, 2, in_shape[2], out_nchw[2]));
  KILN_ASSIGN_OR_RETURN(Axis aw, make_axis(node, 1, 2, in_shape[3], out_nchw[3]));
  int64_t n = in_shape[0], cc = in_shape[1], b = in_shape[4];
  ir::Buffer in("in", in_shape, ir::BufferScope::kArgument);
  ir::Buffer out("out", {n, cc, ah.out, aw.out, b}, ir::BufferScope::kArgument);
  ir::Buffer acc("acc", {b}, ir::BufferScope::kLocal);
  Expr f = ir::var("n_cc_oh"), ow = ir::var("ow"), kh = ir::var("kh"), kw = ir::var("kw"),
       v = ir::var("v");
  Expr ni = f / Expr(cc * ah.out), ci = f / Expr(ah.out) % Expr(cc), oh = f % Expr(ah.out);
  Expr h = oh * Expr(ah.stride) - Expr(ah.pad_begin) + kh * Expr(ah.dilation);
  Expr w = ow * Expr(aw.stride) - Expr(aw.pad_begin) + kw * Expr(aw.dilation);
  Expr inside = h >= Expr(0) && h < Expr(ah.in) && w >= Expr(0) && w < Expr(aw.in);
  const Expr identity = is_max ? ir::f32(-std::numeric_limits<float>::infinity()) : ir::f32(0);
  Stmt init = lanes(v, b, ir::Store(acc, {v}, identity));
  Expr tap = in.load({ni, ci, h, w, v});
  Stmt add = ir::If(
      inside,
      lanes(v, b, ir::Store(acc, {v}, is_max ? ir::max(acc.load({v}), tap) : acc.load({v}) + tap)));
  Stmt taps = ir::LoopNest({{kh, ah.kernel}, {kw, aw.kernel}}, add);
  Expr result = acc.load({v});
  if (!is_max)
    result = result * (window_scale(ah, include_pad, oh) * window_scale(aw, include_pad, ow));
  Stmt store = lanes(v, b, ir::Store(out, {ni, ci, oh, ow, v}, result));
  Stmt body =
      ir::For(ow, aw.out, LoopKind::kSerial, ir::Allocate(acc, ir::Seq({init, taps, store})));
  const std::string name = is_max ? "maxpool_packed" : "averagepool_packed";
  ir::Program program;
  program.name = name;
  program.buffers = {in, out};
  program.num_inputs = 1;
  program.num_outputs = 1;
  program.stages = {{name, ir::For(f, n * cc * ah.out, LoopKind::kParallel, body)}};
  return program;
}

// `out_shape`: [n, c, 1, 1], or [n, c] (a ReduceMean without keepdims).
ir::Program packed_global_average_pool(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape) {
  int64_t n = in_shape[0], cc = in_shape[1], hw = in_shape[2] * in_shape[3], b = in_shape[4];
  ir::Buffer in("in", {n, cc, hw, b}, ir::BufferScope::kArgument);
  ir::Buffer out("out", out_shape, ir::BufferScope::kArgument);
  ir::Buffer acc("acc", {b}, ir::BufferScope::kLocal);
  Expr f = ir::var("n_cc"), i = ir::var("i"), v = ir::var("v");
  Expr ni = f / Expr(cc), ci = f % Expr(cc);
  Stmt init = lanes(v, b, ir::Store(acc, {v}, ir::f32(0)));
  Stmt add = ir::For(i, hw, LoopKind::kSerial,
                     lanes(v, b, ir::Store(acc, {v}, acc.load({v}) + in.load({ni, ci, i, v}))));
  std::vector<Expr> at = {ni, ci * Expr(b) + v};
  if (out_shape.size() == 4) at.insert(at.end(), {Expr(0), Expr(0)});
  Stmt store =
      lanes(v, b, ir::Store(out, at, acc.load({v}) * ir::f32(1.0 / static_cast<double>(hw))));
  ir::Program program;
  program.name = "globalaveragepool_packed";
  program.buffers = {in, out};
  program.num_inputs = 1;
  program.num_outputs = 1;
  program.stages = {
      {"globalaveragepool_packed",
       ir::For(f, n * cc, LoopKind::kParallel, ir::Allocate(acc, ir::Seq({init, add, store})))}};
  return program;
}

}  // namespace

bool packed_pool_output(const frontend::Node& node) {
  return node.op_type == "MaxPool" || node.op_type == "AveragePool";
}

bool has_packed_pool(const frontend::Graph& graph, const frontend::Node& node) {
  if (graph.tensor(node.inputs[0]).shape.size() != 4) return false;
  if (node.op_type == "GlobalAveragePool") return true;
  if (node.op_type == "ReduceMean") {
    Result<std::set<int64_t>> axes = reduce_axes(graph, node, 4);
    return axes.ok() && *axes == std::set<int64_t>{2, 3};
  }
  if (node.op_type != "MaxPool" && node.op_type != "AveragePool") return false;
  bool one_output = node.outputs.size() == 1 || node.outputs[1].empty();
  std::vector<int64_t> dilations = node.attr_ints("dilations", {1, 1});
  return one_output && node.attr_int("storage_order", 0) == 0 &&
         dilations == std::vector<int64_t>{1, 1} && node.attr_ints("kernel_shape", {}).size() == 2;
}

Result<ir::Program> lower_packed_pool(const frontend::Graph& graph, const frontend::Node& node,
                                      const std::vector<int64_t>& packed_in_shape) {
  if (node.op_type == "GlobalAveragePool" || node.op_type == "ReduceMean") {
    return packed_global_average_pool(packed_in_shape, graph.tensor(node.outputs[0]).shape);
  }
  return packed_window_pool(graph, node, packed_in_shape);
}

}  // namespace kiln::compiler
