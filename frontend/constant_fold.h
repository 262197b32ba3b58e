// Constant folding on a shape-inferred ONNX model, in place. Internal to frontend/.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::frontend {

// One pass over the graph in node order: every Constant node becomes an initializer; a Shape
// node whose input has a static shape, and an int64 Gather / Unsqueeze / Squeeze / Concat /
// Slice / Add / Sub / Mul / Div / Identity / Reshape whose inputs are all constants, is
// evaluated (frontend/shape_arith.h) and replaced by an initializer holding its output. Later
// nodes of the same pass see the new constants, so a whole Shape -> Gather -> Unsqueeze ->
// Concat chain folds in one pass; what a fold makes inferable (a Reshape's output shape) needs
// shape inference and another pass. `node_index` holds the file index of each node of the graph
// and is kept in step with the removals. Returns the number of nodes folded; an error (an index
// out of range, a division by zero) names the node.
Result<int> fold_constants(onnx::ModelProto* model, int64_t opset, std::vector<int>* node_index,
                           const std::string& source);

}  // namespace kiln::frontend
