// Load-time evaluation of the int64 shape arithmetic that exporters emit around reshapes
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, with Add/Sub/Mul/Div on the way), so that
// constant folding can replace such sub-graphs by constants. Pure functions on graph Tensors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "frontend/graph.h"

namespace kiln::frontend {

// True for the op types evaluate_int64 can compute: Shape, Gather, Unsqueeze, Squeeze, Concat,
// Slice, Add, Sub, Mul, Div, Identity, Reshape.
bool is_foldable_op(const std::string& op_type);

// Computes `node`'s single output from its inputs (one per node input, nullptr for an omitted
// optional input). Every non-null input must be an int64 constant, except Shape's input, of
// which only the shape is read. `opset` selects attribute-or-input forms (Unsqueeze/Squeeze axes
// became inputs in opset 13). Errors (an axis or index out of range, division by zero, shapes
// that do not broadcast) name the node.
Result<Tensor> evaluate_int64(const Node& node, const std::vector<const Tensor*>& inputs,
                              int64_t opset);

}  // namespace kiln::frontend
