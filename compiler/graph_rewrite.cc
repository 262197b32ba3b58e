#include "compiler/graph_rewrite.h"

#include <utility>

namespace kiln::compiler {

int rewrite_nodes(frontend::Graph* graph, const std::vector<bool>& erase,
                  std::map<size_t, frontend::Node> replace) {
  std::vector<frontend::Node>& nodes = graph->nodes;
  std::vector<frontend::Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto r = replace.find(i);
    if (r != replace.end()) {
      kept.push_back(std::move(r->second));
    } else if (!erase[i]) {
      kept.push_back(std::move(nodes[i]));
    }
  }
  const int removed = static_cast<int>(nodes.size() - kept.size());
  nodes = std::move(kept);
  return removed;
}

}  // namespace kiln::compiler
