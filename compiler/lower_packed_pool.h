// Pools that read a conv's NCHW[b]c output as it is, vectorized over the b lanes of a block, so
// that a pool between two convs costs no layout transform (issue: layouts across the graph):
//   MaxPool            NCHW[b]c in -> NCHW[b]c out (2-D, no dilation, one output)
//   AveragePool        the same (DenseNet's transitions), counting as the NCHW AveragePool does
//   GlobalAveragePool  NCHW[b]c in -> NCHW out ([n, c, 1, 1], what Flatten / Gemm read)
//   ReduceMean         over the two spatial axes of a 4-D tensor (torchvision's x.mean([2, 3])):
//                      the global average pool, its output [n, c, 1, 1] or, without keepdims,
//                      [n, c]
// Buffers: the packed input, then the output.
#pragma once

#include <vector>

#include "common/status.h"
#include "frontend/graph.h"
#include "ir/ir.h"

namespace kiln::compiler {

// Whether `node` has a packed form (otherwise its data is unpacked and lower_pool runs).
bool has_packed_pool(const frontend::Graph& graph, const frontend::Node& node);

// Whether the pool's output is packed as its input is (the window pools), not NCHW.
bool packed_pool_output(const frontend::Node& node);

// The kernel; `packed_in_shape` is [n, c / b, h, w, b]. For the window pools the output is
// [n, c / b, p, q, b].
Result<ir::Program> lower_packed_pool(const frontend::Graph& graph, const frontend::Node& node,
                                      const std::vector<int64_t>& packed_in_shape);

}  // namespace kiln::compiler
