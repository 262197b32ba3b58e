// lower_node's dispatch: each operator family lives in its own file (lowerings.h).
#include "compiler/op_lowering.h"

#include <algorithm>
#include <map>
#include <set>

#include "compiler/elementwise.h"
#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"
#include "compiler/strided_copy_fusion.h"

namespace kiln::compiler {

namespace {

// An elementwise node as its own group, its arguments made the node's data inputs in order (the
// group's kernel takes only the tensors it loads: one-element constants are folded, a repeated
// input is one buffer). Unread arguments get buffers of their own that the kernel ignores.
Result<ir::Program> lower_elementwise_node(const frontend::Graph& graph, const frontend::Node& node,
                                           const ops::TargetInfo& target) {
  ElementwiseGroup group;
  group.nodes = {&node};
  KILN_ASSIGN_OR_RETURN(ir::Program program, lower_elementwise_group(graph, group, target));
  std::map<std::string, ir::Buffer> loaded;
  for (int i = 0; i < program.num_inputs; ++i)
    loaded[program.buffers[i]->name] = program.buffers[i];
  std::vector<ir::Buffer> buffers;
  for (const std::string& name : node.inputs) {
    if (name.empty()) continue;
    auto it = loaded.find(name);
    if (it != loaded.end()) {
      buffers.push_back(it->second);
      loaded.erase(it);
    } else {
      buffers.push_back(tensor_buffer(graph, name));
    }
  }
  const int num_inputs = static_cast<int>(buffers.size());
  buffers.insert(buffers.end(), program.buffers.begin() + program.num_inputs,
                 program.buffers.end());
  program.buffers = std::move(buffers);
  program.num_inputs = num_inputs;
  return program;
}

}  // namespace

bool is_view_op(const std::string& op_type) {
  static const std::set<std::string> kViews = {"Reshape",   "Flatten",  "Squeeze",
                                               "Unsqueeze", "Identity", "Dropout"};
  return kViews.count(op_type) > 0;
}

bool is_identity_pad(const frontend::Graph& graph, const frontend::Node& node) {
  if (node.op_type != "Pad" || node.inputs.empty() || node.inputs[0].empty() ||
      node.outputs.empty() || node.outputs[0].empty()) {
    return false;
  }
  Result<std::vector<int64_t>> read = pad_amounts(graph, node);
  if (!read.ok()) return false;  // lower_pad names what is wrong
  const std::vector<int64_t>& pads = *read;
  return !pads.empty() && std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }) &&
         graph.tensor(node.outputs[0]).shape == graph.tensor(node.inputs[0]).shape;
}

bool is_order_preserving_transpose(const frontend::Graph& graph, const frontend::Node& node) {
  if (node.op_type != "Transpose" || node.inputs.empty() || node.inputs[0].empty() ||
      node.outputs.empty() || node.outputs[0].empty()) {
    return false;
  }
  const std::vector<int64_t>& shape = graph.tensor(node.inputs[0]).shape;
  std::optional<std::vector<int64_t>> perm =
      transpose_perm(node, static_cast<int64_t>(shape.size()));
  if (!perm) return false;
  std::vector<int64_t> out_shape;
  int64_t last_moved = -1;  // the input dimension of more than one element placed last
  for (int64_t p : *perm) {
    out_shape.push_back(shape[p]);
    if (shape[p] == 1) continue;
    if (p < last_moved) return false;
    last_moved = p;
  }
  return graph.tensor(node.outputs[0]).shape == out_shape;
}

Result<ir::Program> lower_node(const frontend::Graph& graph, const frontend::Node& node,
                               const ops::TargetInfo& target) {
  const std::string& op = node.op_type;
  if (node.inputs.empty() || node.inputs[0].empty() || node.outputs.empty() ||
      node.outputs[0].empty()) {
    return inconsistent(node, "has no data input or output");
  }
  if (is_elementwise(node)) return lower_elementwise_node(graph, node, target);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    return lower_pool(graph, node, target);
  }
  if (op == "ReduceMean" || op == "ReduceSum") return lower_reduce(graph, node, target);
  if (op == "Softmax") return lower_softmax(graph, node, target);
  if (op == "LayerNormalization") return lower_layernorm(graph, node, target);
  if (op == "Transpose" || op == "Concat" || op == "Split" || op == "Slice" || op == "Pad" ||
      op == "Gather" || op == kStridedCopyOp) {
    return lower_data_movement(graph, node, target);
  }
  return unsupported(node, "kiln has no standalone kernel for " + op);
}

}  // namespace kiln::compiler
