// Non-tunable operators -> loop-nest IR kernels (one ir::Program per node), generated through the
// same LLVM path as the tuned kernels. Tunable operators (Conv, Gemm, MatMul) are the compiler's
// (compiler/compile_model.h), through ops/ templates; elementwise operators are
// compiler/elementwise.h's, so that chains fuse.
//
// Kernel contract: a Program whose argument buffers are the node's DATA inputs in input order
// (parameter inputs such as Reshape's shape or Slice's starts, and omitted optional inputs, are
// skipped: their values are graph constants, read at lowering time), then its outputs; each
// buffer has the tensor's shape (a scalar as shape {1}); workspace buffers may follow. Running
// every stage computes the outputs. Outer loops are parallel where the work allows, the innermost
// contiguous loop vectorized.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "frontend/graph.h"
#include "ir/ir.h"
#include "ops/template.h"

namespace kiln::compiler {

// Ops whose output is the input's elements under another shape: Reshape, Flatten, Squeeze,
// Unsqueeze, Identity, Dropout (inference). They get no kernel: the executor aliases.
bool is_view_op(const std::string& op_type);

// A Pad whose pads are all (constant) zeros: its output is its input, so it gets no kernel either.
bool is_identity_pad(const frontend::Graph& graph, const frontend::Node& node);

// A Transpose whose dimensions of more than one element keep their order (BERT's [1, s, d] <->
// [s, 1, d]; the perm may move dimensions of one element anywhere): its output holds its input's
// elements in the same order, so it can be a view. False for a perm that is not a permutation of
// the input's dimensions or an output shape that does not follow from it (lower_transpose names
// what is wrong).
bool is_order_preserving_transpose(const frontend::Graph& graph, const frontend::Node& node);

// The kernel of a non-tunable, non-view node: MaxPool, AveragePool, GlobalAveragePool,
// ReduceMean, ReduceSum, Softmax, LayerNormalization, Transpose, Concat, Split, Slice, Pad,
// Gather, BatchNormalization (not folded into a conv), and any elementwise op on its own.
// kUnimplemented naming the node (Node::describe) for an attribute combination kiln does not
// handle (e.g. a non-constant Gather index), kInvalidArgument for an inconsistent node.
Result<ir::Program> lower_node(const frontend::Graph& graph, const frontend::Node& node,
                               const ops::TargetInfo& target);

// out = transpose(in, perm) as its own kernel (buffers: in, out), for the compiler's layout
// changes (Gemm transA, MatMul's right operand).
ir::Program transpose_program(const std::vector<int64_t>& in_shape,
                              const std::vector<int64_t>& perm, const std::string& name);

}  // namespace kiln::compiler
