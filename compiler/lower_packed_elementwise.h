// Elementwise groups and channel Concats computed in a conv's NCHW[b]c layout, so that what sits
// between two convs (DenseNet's Concat -> BatchNorm -> Relu, a squeeze-excitation's Mul by the
// channel scales, a residual Add that no conv absorbed) costs no unpack before it and no data
// packing after it.
//
// Both write an output of shape [n, c / b, h, w, b] for a 4-D NCHW tensor [n, c, h, w] whose c is
// a multiple of b. Inputs named in `packed_inputs` are given in that same packed layout (with
// their own channel count); every other input is read in its logical NCHW layout, at the
// coordinates numpy broadcasting (or the Concat's channel offset) maps the output's to, which
// packs it on the fly. The b lanes of a block are the SIMD dimension.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/elementwise.h"
#include "frontend/graph.h"
#include "ir/ir.h"
#include "ops/template.h"

namespace kiln::compiler {

// The group's kernel: buffers = external_inputs(group) (packed ones of `packed_shape`, which is
// the output's packed shape: a packed input has the output's shape), then the output.
// InvalidArgument when `packed_shape` is not the output's shape packed.
Result<ir::Program> lower_packed_elementwise_group(const frontend::Graph& graph,
                                                   const ElementwiseGroup& group,
                                                   const std::vector<int64_t>& packed_shape,
                                                   const std::set<std::string>& packed_inputs,
                                                   const ops::TargetInfo& target);

// A Concat of 4-D tensors along axis 1 (channels) into NCHW[block]c: buffers = the node's
// inputs (packed ones [n, c_i / block, h, w, block]), then the output. Errors name the node: an
// axis other than the channels, an input whose channels are not a multiple of `block`, shapes
// that do not fit together.
Result<ir::Program> lower_packed_concat(const frontend::Graph& graph, const frontend::Node& node,
                                        int64_t block, const std::set<std::string>& packed_inputs,
                                        const ops::TargetInfo& target);

// Whether `node` is a Concat lower_packed_concat takes with `block` (rank 4, the channel axis,
// every input's channels a multiple of block).
bool is_packable_concat(const frontend::Graph& graph, const frontend::Node& node, int64_t block);

}  // namespace kiln::compiler
