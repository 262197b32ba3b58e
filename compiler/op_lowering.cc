// lower_node's dispatch: each operator family lives in its own file (lowerings.h).
#include "compiler/op_lowering.h"

#include <set>

#include "compiler/elementwise.h"
#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"

namespace kiln::compiler {

bool is_view_op(const std::string& op_type) {
  static const std::set<std::string> kViews = {"Reshape",   "Flatten",  "Squeeze",
                                               "Unsqueeze", "Identity", "Dropout"};
  return kViews.count(op_type) > 0;
}

Result<ir::Program> lower_node(const frontend::Graph& graph, const frontend::Node& node,
                               const ops::TargetInfo& target) {
  const std::string& op = node.op_type;
  if (node.inputs.empty() || node.inputs[0].empty() || node.outputs.empty() ||
      node.outputs[0].empty()) {
    return inconsistent(node, "has no data input or output");
  }
  if (is_elementwise(node)) {
    ElementwiseGroup group;
    group.nodes = {&node};
    return lower_elementwise_group(graph, group, target);
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    return lower_pool(graph, node, target);
  }
  if (op == "ReduceMean" || op == "ReduceSum") return lower_reduce(graph, node, target);
  if (op == "Softmax") return lower_softmax(graph, node, target);
  if (op == "LayerNormalization") return lower_layernorm(graph, node, target);
  if (op == "Transpose" || op == "Concat" || op == "Split" || op == "Slice" || op == "Pad" ||
      op == "Gather") {
    return lower_data_movement(graph, node, target);
  }
  return unsupported(node, "kiln has no standalone kernel for " + op);
}

}  // namespace kiln::compiler
