// Graph pass: a Slice whose output reaches one Transpose only through reshaping views (Reshape,
// Flatten, Squeeze, Unsqueeze, Identity), each tensor on the way read by that one node and no
// graph output, becomes one copy: the Transpose's output read straight from the Slice's input
// through the composed strides. BERT's attention slices its fused projection [s, 1, 3d] into Q,
// K and V, reshapes each to [s, h, d/h] and transposes it to [h, s, d/h]: one copy each instead
// of two. The node that replaces the chain is kiln's own kStridedCopyOp, with attributes `base`
// and `strides`: output element o (row-major over the output's shape) is input element
// base + sum over d of o_d * strides[d]. A chain whose reshape cannot be written as strides
// (merging dimensions that the slice left apart), or a slice with a negative step, is left as it
// is.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "frontend/graph.h"

namespace kiln::compiler {

inline constexpr char kStridedCopyOp[] = "kiln.StridedCopy";

// Rewrites `graph` in place; returns how many nodes the rewrite removed.
int fuse_strided_copies(frontend::Graph* graph);

// The strides that view the elements of a strided tensor (`shape`, `strides`, in row-major order)
// as `new_shape` of the same element count, or nullopt when some dimension of `new_shape` would
// span dimensions that are not contiguous with each other. Dimensions of one element get stride 0.
std::optional<std::vector<int64_t>> reshape_strides(const std::vector<int64_t>& shape,
                                                    const std::vector<int64_t>& strides,
                                                    const std::vector<int64_t>& new_shape);

}  // namespace kiln::compiler
