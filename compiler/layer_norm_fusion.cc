#include "compiler/layer_norm_fusion.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph_rewrite.h"

namespace kiln::compiler {

namespace {

using frontend::Graph;
using frontend::Node;

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& in : g.nodes[i].inputs) {
        if (!in.empty()) consumers_[in].push_back(i);
      }
    }
    outputs_.insert(g.outputs.begin(), g.outputs.end());
  }

  // The nodes of a LayerNormalization written out from the ReduceMean at `first`, in the
  // pattern's order (the last one computes y), and its epsilon; nullopt if it is not one.
  struct Match {
    std::vector<size_t> nodes;
    float epsilon = 0;
  };
  std::optional<Match> match(size_t first) const {
    const Node& mean = g_.nodes[first];
    if (mean.op_type != "ReduceMean" || !reduces_last_axis(mean)) return std::nullopt;
    const std::string& x = mean.inputs[0];
    Match m{{first}, 0};
    // d = x - mean, read by Pow and Div.
    auto sub = only_consumer(mean.outputs[0], "Sub");
    if (!sub || g_.nodes[*sub].inputs != std::vector<std::string>{x, mean.outputs[0]}) {
      return std::nullopt;
    }
    const std::string& d = g_.nodes[*sub].outputs[0];
    auto readers = consumers(d);
    if (readers.size() != 2 || outputs_.count(d)) return std::nullopt;
    const size_t pow = g_.nodes[readers[0]].op_type == "Pow" ? readers[0] : readers[1];
    const size_t div = pow == readers[0] ? readers[1] : readers[0];
    if (g_.nodes[pow].op_type != "Pow" || g_.nodes[div].op_type != "Div" ||
        g_.nodes[pow].inputs.size() != 2 || g_.nodes[pow].inputs[0] != d ||
        scalar(g_.nodes[pow].inputs[1]) != std::optional<float>(2.0f)) {
      return std::nullopt;
    }
    auto var = only_consumer(g_.nodes[pow].outputs[0], "ReduceMean");
    if (!var || !reduces_last_axis(g_.nodes[*var])) return std::nullopt;
    auto add_eps = only_consumer(g_.nodes[*var].outputs[0], "Add");
    if (!add_eps) return std::nullopt;
    std::optional<float> eps = other_scalar(g_.nodes[*add_eps], g_.nodes[*var].outputs[0]);
    if (!eps) return std::nullopt;
    auto sqrt = only_consumer(g_.nodes[*add_eps].outputs[0], "Sqrt");
    if (!sqrt || only_consumer(g_.nodes[*sqrt].outputs[0], "Div") != std::optional(div) ||
        g_.nodes[div].inputs != std::vector<std::string>{d, g_.nodes[*sqrt].outputs[0]}) {
      return std::nullopt;
    }
    const int64_t width = g_.tensor(x).shape.back();
    auto mul = only_consumer(g_.nodes[div].outputs[0], "Mul");
    if (!mul || !other_is_row(g_.nodes[*mul], g_.nodes[div].outputs[0], width)) {
      return std::nullopt;
    }
    auto add_b = only_consumer(g_.nodes[*mul].outputs[0], "Add");
    if (!add_b || !other_is_row(g_.nodes[*add_b], g_.nodes[*mul].outputs[0], width)) {
      return std::nullopt;
    }
    m.nodes = {first, *sub, pow, *var, *add_eps, *sqrt, div, *mul, *add_b};
    m.epsilon = *eps;
    return m;
  }

  // The operand of a two-input node that is not `operand`.
  static const std::string& other(const Node& node, const std::string& operand) {
    return node.inputs[0] == operand ? node.inputs[1] : node.inputs[0];
  }

 private:
  std::vector<size_t> consumers(const std::string& tensor) const {
    auto it = consumers_.find(tensor);
    return it == consumers_.end() ? std::vector<size_t>{} : it->second;
  }

  // The node reading `tensor`, if it is the only one, of type `op`, and `tensor` is no output.
  std::optional<size_t> only_consumer(const std::string& tensor, const char* op) const {
    std::vector<size_t> readers = consumers(tensor);
    if (readers.size() != 1 || outputs_.count(tensor) || g_.nodes[readers[0]].op_type != op) {
      return std::nullopt;
    }
    return readers[0];
  }

  bool float_constant(const std::string& name) const {
    return !name.empty() && g_.is_constant(name) &&
           g_.tensor(name).dtype == frontend::DType::kFloat32;
  }

  // The value of a float32 constant of one element.
  std::optional<float> scalar(const std::string& name) const {
    if (!float_constant(name) || g_.tensor(name).f32.size() != 1) return std::nullopt;
    return g_.tensor(name).f32[0];
  }

  std::optional<float> other_scalar(const Node& node, const std::string& operand) const {
    if (node.inputs.size() != 2) return std::nullopt;
    return scalar(other(node, operand));
  }

  // The other operand is a float32 constant of `width` values along the last axis.
  bool other_is_row(const Node& node, const std::string& operand, int64_t width) const {
    if (node.inputs.size() != 2 || (node.inputs[0] != operand && node.inputs[1] != operand)) {
      return false;
    }
    const std::string& row = other(node, operand);
    if (!float_constant(row)) return false;
    const std::vector<int64_t>& shape = g_.tensor(row).shape;
    if (shape.empty() || shape.back() != width) return false;
    for (size_t i = 0; i + 1 < shape.size(); ++i) {
      if (shape[i] != 1) return false;
    }
    return g_.tensor(node.outputs[0]).shape == g_.tensor(operand).shape;
  }

  // A ReduceMean over the last axis alone, keeping it as a dimension of 1.
  bool reduces_last_axis(const Node& node) const {
    if (node.inputs.empty() || node.outputs.size() != 1 || node.attr_int("keepdims", 1) != 1) {
      return false;
    }
    const std::vector<int64_t>& shape = g_.tensor(node.inputs[0]).shape;
    if (shape.empty()) return false;
    std::vector<int64_t> axes = node.attr_ints("axes", {});
    if (node.inputs.size() > 1 && !node.inputs[1].empty()) {  // opset 18: axes as an input
      if (!g_.is_constant(node.inputs[1])) return false;
      axes = g_.tensor(node.inputs[1]).i64;
    }
    const int64_t last = static_cast<int64_t>(shape.size()) - 1;
    return axes.size() == 1 && (axes[0] == -1 || axes[0] == last);
  }

  const Graph& g_;
  std::map<std::string, std::vector<size_t>> consumers_;
  std::set<std::string> outputs_;
};

}  // namespace

int fuse_layer_norms(Graph* graph) {
  Graph& g = *graph;
  std::vector<bool> erase(g.nodes.size(), false);
  std::map<size_t, Node> replace;  // the first node of a match -> its LayerNormalization
  {
    Matcher matcher(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (erase[i]) continue;
      std::optional<Matcher::Match> m = matcher.match(i);
      if (!m) continue;
      const Node& mul = g.nodes[m->nodes[7]];
      const Node& add = g.nodes[m->nodes[8]];
      Node ln;
      ln.op_type = "LayerNormalization";
      ln.name = add.name.empty() ? add.outputs[0] : add.name;
      ln.index = g.nodes[i].index;
      ln.inputs = {g.nodes[i].inputs[0], Matcher::other(mul, g.nodes[m->nodes[6]].outputs[0]),
                   Matcher::other(add, mul.outputs[0])};
      ln.outputs = {add.outputs[0]};
      ln.attrs["axis"] = int64_t{-1};
      ln.attrs["epsilon"] = m->epsilon;
      for (size_t n : m->nodes) erase[n] = true;
      replace[i] = std::move(ln);
    }
  }
  return rewrite_nodes(&g, erase, std::move(replace));
}

}  // namespace kiln::compiler
