// What a graph pass (compiler/layer_norm_fusion.h, compiler/strided_copy_fusion.h) does with its
// matches once found: the matched nodes leave the graph and one new node takes the place of each
// match, so that the graph stays in execution order.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "frontend/graph.h"

namespace kiln::compiler {

// Puts each node of `replace` at its index and drops every other node whose `erase` flag (one per
// node) is set; the rest keep their order. Returns how many nodes the graph lost.
int rewrite_nodes(frontend::Graph* graph, const std::vector<bool>& erase,
                  std::map<size_t, frontend::Node> replace);

}  // namespace kiln::compiler
