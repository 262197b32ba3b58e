// LayerNormalization: each row of the input flattened at `axis` (default -1) is normalized,
// y = (x - mean) / sqrt(var + epsilon) * Scale + B, mean and variance in float32 with a second
// pass over the row for the variance (no cancellation). One parallel task per row, SIMD row
// reductions. The optional Mean and InvStdDev outputs are written when the node has them.
#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"

namespace kiln::compiler {

using frontend::Graph;
using frontend::Node;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

Result<ir::Program> lower_layernorm(const Graph& graph, const Node& node,
                                    const ops::TargetInfo& target) {
  if (node.inputs.size() < 2) return inconsistent(node, "expects X and Scale");
  for (const std::string& name : node.inputs) {
    if (!name.empty()) KILN_RETURN_IF_ERROR(check_float(graph, node, name));
  }
  const std::vector<int64_t>& shape = graph.tensor(node.inputs[0]).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return inconsistent(node, "a scalar input");
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, node.attr_int("axis", -1), rank));
  const int64_t rows = product(std::vector<int64_t>(shape.begin(), shape.begin() + axis));
  const int64_t n = product(std::vector<int64_t>(shape.begin() + axis, shape.end()));
  const double eps = node.attr_float("epsilon", 1e-5f);

  std::vector<ir::Buffer> inputs = {tensor_buffer(graph, node.inputs[0])};
  const ir::Buffer x = inputs[0];
  // Scale and B: the normalized shape (any leading ones) or one element.
  for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
    if (node.inputs[i].empty()) continue;
    ir::Buffer b = tensor_buffer(graph, node.inputs[i]);
    if (b->num_elements() != n && b->num_elements() != 1) {
      return unsupported(node, "input '" + node.inputs[i] + "' of shape " +
                                   frontend::dims_text(b->shape) + " for rows of " +
                                   std::to_string(n) + " elements");
    }
    inputs.push_back(b);
  }
  const ir::Buffer scale = node.inputs[1].empty() ? ir::Buffer() : inputs[1];
  const bool has_bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  const ir::Buffer bias = has_bias ? inputs.back() : ir::Buffer();
  if (!scale.defined()) return inconsistent(node, "Scale is required");

  std::vector<ir::Buffer> outputs;
  ir::Buffer y = tensor_buffer(graph, node.outputs.at(0));
  outputs.push_back(y);
  ir::Buffer mean_out, inv_out;
  if (node.outputs.size() > 1 && !node.outputs[1].empty()) {
    mean_out = tensor_buffer(graph, node.outputs[1]);
    outputs.push_back(mean_out);
  }
  if (node.outputs.size() > 2 && !node.outputs[2].empty()) {
    inv_out = tensor_buffer(graph, node.outputs[2]);
    outputs.push_back(inv_out);
  }
  for (const ir::Buffer& b : {mean_out, inv_out}) {
    if (b.defined() && b->num_elements() != rows) {
      return inconsistent(node, "output '" + b->name + "' does not hold one value per row");
    }
  }

  Expr row = ir::var("row");
  ir::Buffer stat("stat", {2}, ir::BufferScope::kLocal);  // mean, 1 / stddev
  auto at = [&](const Expr& col) { return row * Expr(n) + col; };
  auto param = [&](const ir::Buffer& b, const Expr& col) {
    return b->num_elements() == 1 ? b.load_flat(Expr(0)) : b.load_flat(col);
  };
  const Expr inv_n = ir::f32(1.0 / static_cast<double>(n));
  std::vector<Stmt> parts;
  parts.push_back(row_reduce(
      Combine::kSum, n, target, [&](const Expr& col) { return x.load_flat(at(col)); }, stat,
      Expr(0), ir::f32(0)));
  parts.push_back(ir::Store(stat, {0}, stat.load({0}) * inv_n));
  parts.push_back(row_reduce(
      Combine::kSum, n, target,
      [&](const Expr& col) {
        Expr d = x.load_flat(at(col)) - stat.load({0});
        return d * d;
      },
      stat, Expr(1), ir::f32(0)));
  parts.push_back(
      ir::Store(stat, {1}, ir::f32(1) / ir::sqrt(stat.load({1}) * inv_n + ir::f32(eps))));
  parts.push_back(vector_span(Expr(0), n, target, [&](const Expr& col) {
    Expr v = (x.load_flat(at(col)) - stat.load({0})) * stat.load({1}) * param(scale, col);
    if (bias.defined()) v = v + param(bias, col);
    return ir::StoreFlat(y, at(col), v);
  }));
  if (mean_out.defined()) parts.push_back(ir::StoreFlat(mean_out, row, stat.load({0})));
  if (inv_out.defined()) parts.push_back(ir::StoreFlat(inv_out, row, stat.load({1})));
  Stmt body =
      ir::For(row, rows, LoopKind::kParallel, ir::Allocate(stat, ir::Seq(std::move(parts))));
  return make_program(kernel_name(node), std::move(inputs), std::move(outputs), body);
}

}  // namespace kiln::compiler
