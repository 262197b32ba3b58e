#include "frontend/workload_mapping.h"

#include <algorithm>

#include "ops/registry.h"

namespace kiln::frontend {

Result<std::optional<ops::Workload>> workload_of(const Graph& graph, const Node& node) {
  GraphNodeView view(graph, node);
  for (const ops::Operator* op : ops::all_operators()) {
    std::vector<std::string> types = op->onnx_ops();
    if (std::find(types.begin(), types.end(), node.op_type) == types.end()) continue;
    KILN_ASSIGN_OR_RETURN(std::optional<ops::Workload> w, op->workload_of(view));
    if (w) return w;
  }
  return std::optional<ops::Workload>();
}

}  // namespace kiln::frontend
