#include "compiler/batch_norm_folding.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::compiler {

namespace {

bool float_constant(const frontend::Graph& g, const std::string& name) {
  return !name.empty() && g.is_constant(name) && g.tensor(name).dtype == frontend::DType::kFloat32;
}

}  // namespace

int fold_batch_norms(frontend::Graph* graph) {
  frontend::Graph& g = *graph;
  std::map<std::string, int> uses;
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& in : g.nodes[i].inputs) ++uses[in];
    for (const std::string& out : g.nodes[i].outputs) producer[out] = i;
  }
  std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  std::vector<bool> erase(g.nodes.size(), false);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const frontend::Node& bn = g.nodes[i];
    if (bn.op_type != "BatchNormalization" || bn.inputs.size() < 5) continue;
    const std::string& x = bn.inputs[0];
    auto p = producer.find(x);
    if (p == producer.end() || uses[x] != 1 || outputs.count(x)) continue;
    frontend::Node& conv = g.nodes[p->second];
    if (conv.op_type != "Conv" || conv.inputs.size() < 2) continue;
    bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
    bool foldable =
        float_constant(g, conv.inputs[1]) && (!has_bias || float_constant(g, conv.inputs[2]));
    for (int j = 1; j <= 4; ++j) foldable = foldable && float_constant(g, bn.inputs[j]);
    if (!foldable) continue;
    const frontend::Tensor& w = g.tensor(conv.inputs[1]);
    int64_t k = w.shape.empty() ? 0 : w.shape[0];
    if (k <= 0 || static_cast<int64_t>(g.tensor(bn.inputs[1]).f32.size()) != k) continue;
    const std::vector<float>& gamma = g.tensor(bn.inputs[1]).f32;
    const std::vector<float>& beta = g.tensor(bn.inputs[2]).f32;
    const std::vector<float>& mean = g.tensor(bn.inputs[3]).f32;
    const std::vector<float>& var = g.tensor(bn.inputs[4]).f32;
    if (beta.size() != gamma.size() || mean.size() != gamma.size() || var.size() != gamma.size())
      continue;
    double eps = bn.attr_float("epsilon", 1e-5f);
    frontend::Tensor new_w = w;
    new_w.name = bn.outputs[0] + "/folded_weight";
    frontend::Tensor new_b;
    new_b.name = bn.outputs[0] + "/folded_bias";
    new_b.dtype = frontend::DType::kFloat32;
    new_b.shape = {k};
    new_b.is_constant = true;
    new_b.f32.resize(k);
    int64_t per_channel = static_cast<int64_t>(w.f32.size()) / k;
    for (int64_t c = 0; c < k; ++c) {
      double s = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
      for (int64_t e = 0; e < per_channel; ++e) {
        new_w.f32[c * per_channel + e] = static_cast<float>(w.f32[c * per_channel + e] * s);
      }
      double b = has_bias ? g.tensor(conv.inputs[2]).f32[c] : 0.0;
      new_b.f32[c] = static_cast<float>((b - mean[c]) * s + beta[c]);
    }
    conv.inputs.resize(3);
    conv.inputs[1] = new_w.name;
    conv.inputs[2] = new_b.name;
    conv.outputs = {bn.outputs[0]};
    g.tensors[new_w.name] = std::move(new_w);
    g.tensors[new_b.name] = std::move(new_b);
    erase[i] = true;
    ++folded;
  }
  std::vector<frontend::Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!erase[i]) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  return folded;
}

}  // namespace kiln::compiler
