// Elementwise groups: one expression per group, evaluated per output element. The expression is
// built once by build_expr from a leaf callback, so that the fused write-back (group_value, per
// coordinate) and the standalone kernel (coalesced flat indices) compute the same thing.
#include "compiler/elementwise.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "common/check.h"
#include "compiler/lowering_util.h"

namespace kiln::compiler {

using frontend::Graph;
using frontend::Node;
using ir::Expr;

namespace {

const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> kOps = {
      "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
      "Erf",  "Exp",       "Sqrt", "Pow",     "Abs",         "Neg",       "Reciprocal",
      "Add",  "Sub",       "Mul",  "Div",     "Max",         "Min",       "BatchNormalization"};
  return kOps;
}

// The value of a one-element constant, which the group's expression folds instead of loading.
std::optional<double> scalar_constant(const Graph& graph, const std::string& name) {
  if (name.empty() || !graph.is_constant(name)) return std::nullopt;
  const frontend::Tensor& t = graph.tensor(name);
  if (t.num_elements() != 1) return std::nullopt;
  if (t.f32.size() == 1) return t.f32[0];
  if (t.i64.size() == 1) return static_cast<double>(t.i64[0]);
  return std::nullopt;
}

// A tensor the group loads, under the shape it broadcasts with (right-aligned against the
// group's output): its own shape, or for BatchNormalization's per-channel inputs [C, 1, ...]
// aligned with axis 1 of the normalized tensor. Both have the same row-major flat indices.
struct Leaf {
  std::string name;
  std::vector<int64_t> shape;
  bool per_channel = false;
};
using LeafFn = std::function<Result<Expr>(const Leaf& leaf)>;

Result<Expr> node_value(const Graph& graph, const Node& node, const std::vector<Expr>& in) {
  const std::string& op = node.op_type;
  auto arity = [&](size_t n) -> Status {
    if (in.size() < n) {
      return inconsistent(
          node, "expects " + std::to_string(n) + " inputs, has " + std::to_string(in.size()));
    }
    return Status::Ok();
  };
  KILN_RETURN_IF_ERROR(arity(1));
  const Expr& x = in[0];
  const Expr zero = ir::f32(0), one = ir::f32(1);
  if (op == "Relu") return ir::max(x, zero);
  if (op == "LeakyRelu")
    return ir::select(x < zero, ir::f32(node.attr_float("alpha", 0.01f)) * x, x);
  if (op == "Clip") {
    // Opset 11+: optional min and max inputs; opset 6's attributes, for old files.
    Expr lo = in.size() > 1 && in[1].defined() ? in[1] : Expr();
    Expr hi = in.size() > 2 && in[2].defined() ? in[2] : Expr();
    if (!lo.defined() && node.attrs.count("min")) lo = ir::f32(node.attr_float("min", 0));
    if (!hi.defined() && node.attrs.count("max")) hi = ir::f32(node.attr_float("max", 0));
    Expr y = x;
    if (lo.defined()) y = ir::max(y, lo);
    if (hi.defined()) y = ir::min(y, hi);
    return y;
  }
  if (op == "Sigmoid") return one / (one + ir::exp(ir::f32(-1) * x));
  if (op == "HardSigmoid") {
    Expr y = ir::f32(node.attr_float("alpha", 0.2f)) * x + ir::f32(node.attr_float("beta", 0.5f));
    return ir::max(zero, ir::min(one, y));
  }
  if (op == "HardSwish") {
    return x * ir::max(zero, ir::min(one, x * ir::f32(1.0 / 6.0) + ir::f32(0.5)));
  }
  if (op == "Tanh") return ir::tanh(x);
  if (op == "Erf") return ir::erf(x);
  if (op == "Exp") return ir::exp(x);
  if (op == "Sqrt") return ir::sqrt(x);
  if (op == "Abs") return ir::abs(x);
  if (op == "Neg") return ir::f32(-1) * x;
  if (op == "Reciprocal") return one / x;
  if (op == "Max" || op == "Min") {
    Expr y = x;
    for (size_t i = 1; i < in.size(); ++i) y = op == "Max" ? ir::max(y, in[i]) : ir::min(y, in[i]);
    return y;
  }
  if (op == "BatchNormalization") {
    KILN_RETURN_IF_ERROR(arity(5));
    if (node.attr_int("training_mode", 0) != 0) return unsupported(node, "training_mode=1");
    if (node.outputs.size() > 1) return unsupported(node, "training outputs (mean, var)");
    Expr eps = ir::f32(node.attr_float("epsilon", 1e-5f));
    // in: X, scale, B, mean, var.
    return (x - in[3]) * (in[1] / ir::sqrt(in[4] + eps)) + in[2];
  }
  KILN_RETURN_IF_ERROR(arity(2));
  const Expr& y = in[1];
  if (op == "Add") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  if (op == "Div") return x / y;
  if (op == "Pow") {
    // Small constant exponents as multiplications: exact where pow is, and no libm call.
    if (std::optional<double> e = scalar_constant(graph, node.inputs[1])) {
      if (*e == 1) return x;
      if (*e == 2) return x * x;
      if (*e == 3) return x * x * x;
      if (*e == 0.5) return ir::sqrt(x);
      if (*e == -1) return one / x;
    }
    return ir::pow(x, y);
  }
  return InternalError(node.describe() + " is not an elementwise op");
}

// The group's output expression, with the tensors it loads given by `leaf`. REQUIRES: the group
// is not empty.
Result<Expr> build_expr(const Graph& graph, const ElementwiseGroup& group, const LeafFn& leaf) {
  std::map<std::string, Expr> computed;
  for (const Node* node : group.nodes) {
    const std::vector<int64_t>& out_shape = graph.tensor(node->outputs.at(0)).shape;
    std::vector<Expr> in;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const std::string& name = node->inputs[i];
      if (name.empty()) {
        in.emplace_back();
        continue;
      }
      if (auto it = computed.find(name); it != computed.end()) {
        in.push_back(it->second);
        continue;
      }
      if (std::optional<double> v = scalar_constant(graph, name)) {
        in.push_back(ir::f32(*v));
        continue;
      }
      KILN_RETURN_IF_ERROR(check_float(graph, *node, name));
      Leaf l{name, graph.tensor(name).shape, false};
      if (node->op_type == "BatchNormalization" && i > 0) {
        if (out_shape.size() < 2) return unsupported(*node, "input of rank < 2");
        if (product(l.shape) != out_shape[1]) {
          return inconsistent(*node, "input '" + name + "' has " +
                                         std::to_string(product(l.shape)) + " elements for " +
                                         std::to_string(out_shape[1]) + " channels");
        }
        l.shape = std::vector<int64_t>(out_shape.size() - 1, 1);
        l.shape[0] = out_shape[1];
        l.per_channel = true;
      }
      // Numpy broadcasting against this node's output, right-aligned.
      if (l.shape.size() > out_shape.size()) {
        return inconsistent(*node, "input '" + name + "' has more dimensions than the output");
      }
      size_t lead = out_shape.size() - l.shape.size();
      for (size_t d = 0; d < l.shape.size(); ++d) {
        if (l.shape[d] != 1 && l.shape[d] != out_shape[lead + d]) {
          return inconsistent(*node, "input '" + name + "' of shape " +
                                         frontend::dims_text(l.shape) + " does not broadcast to " +
                                         frontend::dims_text(out_shape));
        }
      }
      KILN_ASSIGN_OR_RETURN(Expr e, leaf(l));
      in.push_back(e);
    }
    KILN_ASSIGN_OR_RETURN(Expr value, node_value(graph, *node, in));
    computed[node->outputs.at(0)] = value;
  }
  return computed.at(group.output());
}

// The coordinates of `leaf` that output coordinates `out_idx` broadcast to, one per dimension
// of leaf.shape.
std::vector<Expr> broadcast_index(const Leaf& leaf, const std::vector<Expr>& out_idx) {
  std::vector<Expr> idx(leaf.shape.size());
  size_t lead = out_idx.size() - leaf.shape.size();
  for (size_t d = 0; d < leaf.shape.size(); ++d) {
    idx[d] = leaf.shape[d] == 1 ? Expr(0) : out_idx[lead + d];
  }
  return idx;
}

}  // namespace

bool is_elementwise(const Node& node) { return elementwise_ops().count(node.op_type) > 0; }

const std::string& ElementwiseGroup::output() const {
  KILN_CHECK(!nodes.empty()) << "an empty elementwise group";
  return nodes.back()->outputs.at(0);
}

std::vector<std::string> external_inputs(const Graph& graph, const ElementwiseGroup& group) {
  std::set<std::string> produced, seen;
  std::vector<std::string> out;
  for (const Node* node : group.nodes) {
    for (const std::string& name : node->inputs) {
      if (name.empty() || produced.count(name) || scalar_constant(graph, name)) continue;
      if (seen.insert(name).second) out.push_back(name);
    }
    produced.insert(node->outputs.at(0));
  }
  return out;
}

Result<Expr> group_value(const Graph& graph, const ElementwiseGroup& group,
                         const std::vector<Expr>& out_idx, const TensorLoader& load) {
  KILN_CHECK(out_idx.size() == graph.tensor(group.output()).shape.size())
      << "group_value: " << out_idx.size() << " coordinates for output '" << group.output()
      << "' of shape " << frontend::dims_text(graph.tensor(group.output()).shape);
  return build_expr(graph, group, [&](const Leaf& leaf) -> Result<Expr> {
    std::vector<Expr> idx = broadcast_index(leaf, out_idx);
    // A per-channel input's own shape is [C] (or its C elements under another shape of ones).
    if (leaf.per_channel) {
      const std::vector<int64_t>& own = graph.tensor(leaf.name).shape;
      std::vector<Expr> own_idx(own.size(), Expr(0));
      for (size_t d = 0; d < own.size(); ++d) {
        if (own[d] != 1) own_idx[d] = idx[0];
      }
      return load(leaf.name, own_idx);
    }
    return load(leaf.name, idx);
  });
}

Result<ir::Program> lower_elementwise_group(const Graph& graph, const ElementwiseGroup& group,
                                            const ops::TargetInfo& target) {
  if (group.nodes.empty()) return InternalError("lower_elementwise_group: an empty group");
  const Node& last = *group.nodes.back();
  const std::string& out_name = group.output();
  KILN_RETURN_IF_ERROR(check_float(graph, last, out_name));
  const std::vector<int64_t>& out_shape = graph.tensor(out_name).shape;
  const size_t rank = out_shape.size();

  // Collect the leaves' broadcast shapes, padded to the output's rank.
  std::vector<std::vector<int64_t>> shapes;
  KILN_RETURN_IF_ERROR(build_expr(graph, group, [&](const Leaf& leaf) -> Result<Expr> {
                         std::vector<int64_t> padded(rank - leaf.shape.size(), 1);
                         padded.insert(padded.end(), leaf.shape.begin(), leaf.shape.end());
                         shapes.push_back(padded);
                         return ir::f32(0);
                       }).status());

  // Coalesce: drop dimensions of extent 1 and merge neighbours that every leaf either reads
  // whole or broadcasts, so that the innermost loop is as long as it can be.
  std::vector<std::vector<size_t>> merged;  // groups of output dimensions, outermost first
  auto pattern = [&](size_t d) {
    std::vector<bool> p;
    for (const auto& s : shapes) p.push_back(s[d] == 1);
    return p;
  };
  for (size_t d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;
    if (!merged.empty() && pattern(merged.back().back()) == pattern(d)) {
      merged.back().push_back(d);
    } else {
      merged.push_back({d});
    }
  }
  std::vector<int64_t> dims;
  for (const auto& m : merged) {
    int64_t n = 1;
    for (size_t d : m) n *= out_shape[d];
    dims.push_back(n);
  }
  if (dims.empty()) dims = {1};
  const int64_t cols = dims.back();
  std::vector<int64_t> outer(dims.begin(), dims.end() - 1);

  std::map<std::string, ir::Buffer> buffers;
  std::vector<ir::Buffer> inputs;
  for (const std::string& name : external_inputs(graph, group)) {
    buffers[name] = tensor_buffer(graph, name);
    inputs.push_back(buffers[name]);
  }
  ir::Buffer out = tensor_buffer(graph, out_name);

  ir::Stmt body;
  Status error = Status::Ok();
  body = parallel_rows(product(outer), cols, target, [&](const Expr& row, const Expr& col) {
    std::vector<Expr> coords = unfuse(row, outer);
    coords.push_back(col);
    auto result = build_expr(graph, group, [&](const Leaf& leaf) -> Result<Expr> {
      std::vector<int64_t> padded(rank - leaf.shape.size(), 1);
      padded.insert(padded.end(), leaf.shape.begin(), leaf.shape.end());
      std::vector<int64_t> strides = row_major_strides(padded);
      Expr flat(0);
      for (size_t m = 0; m < merged.size(); ++m) {
        size_t inner = merged[m].back();
        if (padded[inner] != 1) flat = flat + coords[m] * Expr(strides[inner]);
      }
      return buffers.at(leaf.name).load_flat(flat);
    });
    if (!result.ok()) {
      error = result.status();
      return ir::Seq({});
    }
    return ir::StoreFlat(out, row * Expr(cols) + col, *result);
  });
  KILN_RETURN_IF_ERROR(error);
  return make_program(kernel_name(last), std::move(inputs), {out}, body);
}

}  // namespace kiln::compiler
