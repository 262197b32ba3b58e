// The operator families behind lower_node (op_lowering.h), one file each. Every function
// follows op_lowering.h's kernel contract and REQUIRES a node of one of the op types it lists.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "common/status.h"
#include "frontend/graph.h"
#include "ir/ir.h"
#include "ops/template.h"

namespace kiln::compiler {

// MaxPool, AveragePool, GlobalAveragePool (lower_pool.cc).
Result<ir::Program> lower_pool(const frontend::Graph& graph, const frontend::Node& node,
                               const ops::TargetInfo& target);
// The axes a ReduceMean / ReduceSum reduces (from its attribute or its constant second input),
// sorted and non-negative; empty when the node is a no-op copy (lower_reduce.cc).
Result<std::set<int64_t>> reduce_axes(const frontend::Graph& graph, const frontend::Node& node,
                                      int64_t rank);
// ReduceMean, ReduceSum (lower_reduce.cc).
Result<ir::Program> lower_reduce(const frontend::Graph& graph, const frontend::Node& node,
                                 const ops::TargetInfo& target);
// Softmax (lower_softmax.cc).
Result<ir::Program> lower_softmax(const frontend::Graph& graph, const frontend::Node& node,
                                  const ops::TargetInfo& target);
// LayerNormalization (lower_layernorm.cc).
Result<ir::Program> lower_layernorm(const frontend::Graph& graph, const frontend::Node& node,
                                    const ops::TargetInfo& target);
// Transpose, Concat, Split, Slice, Pad, Gather, StridedCopy (lower_data_movement.cc).
Result<ir::Program> lower_data_movement(const frontend::Graph& graph, const frontend::Node& node,
                                        const ops::TargetInfo& target);

// A Transpose's perm (the dimensions reversed when it has none), or nullopt when it is not a
// permutation of `rank` dimensions (lower_data_movement.cc).
std::optional<std::vector<int64_t>> transpose_perm(const frontend::Node& node, int64_t rank);

// What a Slice reads: its output's shape, the input element (row-major index) its first element
// is, and for each output dimension how many input elements one step along it moves. From its
// constant starts / ends / axes / steps inputs (opset 10+) or attributes (opset 1), checked
// against the output's shape (lower_data_movement.cc).
struct SliceGeometry {
  std::vector<int64_t> shape;
  int64_t base = 0;
  std::vector<int64_t> strides;
};
Result<SliceGeometry> slice_geometry(const frontend::Graph& graph, const frontend::Node& node);

}  // namespace kiln::compiler
