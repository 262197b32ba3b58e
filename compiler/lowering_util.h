// What the operator lowerings of compiler/ share: errors that name the node, argument buffers of
// graph tensors, constant parameter inputs, and the loop shapes every kernel is made of (a
// parallel loop over rows and column blocks, and a row's columns as SIMD chunks with tails).
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "frontend/graph.h"
#include "ir/ir.h"
#include "ops/template.h"

namespace kiln::compiler {

// A node attribute combination or input kiln does not handle (kUnimplemented).
Status unsupported(const frontend::Node& node, const std::string& what);
// A node inconsistent in itself (shapes that disagree with its attributes, a bad axis).
Status inconsistent(const frontend::Node& node, const std::string& what);

// `axis` in [-rank, rank) as a non-negative axis, or an inconsistent() error.
Result<int64_t> normalize_axis(const frontend::Node& node, int64_t axis, int64_t rank);

// The kernel name of a node, unique within a graph and a valid symbol: "maxpool_12".
std::string kernel_name(const frontend::Node& node);

// An argument buffer for graph tensor `name`: its shape, a scalar as {1}.
ir::Buffer tensor_buffer(const frontend::Graph& graph, const std::string& name);

// Requires `name` to be a float32 tensor (the only dtype kiln computes in).
Status check_float(const frontend::Graph& graph, const frontend::Node& node,
                   const std::string& name);

// The int64 values of constant input `name` of `node` (what: its role, for messages), or an
// unsupported() error when it is not a graph constant.
Result<std::vector<int64_t>> constant_ints(const frontend::Graph& graph, const frontend::Node& node,
                                           const std::string& name, const std::string& what);

// The raw pads of a Pad node: its constant `pads` input (opset 11 on), else its attribute.
Result<std::vector<int64_t>> pad_amounts(const frontend::Graph& graph, const frontend::Node& node);

// A one-stage program: buffers = inputs, then outputs; the stage is named as the program.
ir::Program make_program(const std::string& name, std::vector<ir::Buffer> inputs,
                         std::vector<ir::Buffer> outputs, ir::Stmt body);

int64_t product(const std::vector<int64_t>& dims);
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);

// The coordinates of a fused loop variable over `dims` (outermost first); dimensions of extent 1
// are the constant 0.
std::vector<ir::Expr> unfuse(const ir::Expr& fused, const std::vector<int64_t>& dims);

// One element's statement at column `col` (a SIMD lane when vectorized).
using ColumnBody = std::function<ir::Stmt(const ir::Expr& col)>;

// Columns [start, start + width) as SIMD bodies: chunks of 4 target vectors, then one body of
// whole vectors, then one of the remaining lanes. `body` must be straight-line (stores of loads
// and arithmetic) for the code generator to vectorize it; otherwise it runs as a loop.
ir::Stmt vector_span(const ir::Expr& start, int64_t width, const ops::TargetInfo& target,
                     const ColumnBody& body);

// The statement of a block of columns [col0, col0 + width) of row `row`.
using BlockBody = std::function<ir::Stmt(const ir::Expr& row, const ir::Expr& col0, int64_t width)>;

// rows x cols work as parallel loops: over rows, and over blocks of columns when there are too
// few rows to keep the threads busy or a row is wider than `max_block` (a tail block runs in a
// second parallel loop).
ir::Stmt parallel_blocks(int64_t rows, int64_t cols, const BlockBody& body,
                         int64_t max_block = INT64_MAX);

// parallel_blocks whose block is one vector_span of per-element statements.
ir::Stmt parallel_rows(
    int64_t rows, int64_t cols, const ops::TargetInfo& target,
    const std::function<ir::Stmt(const ir::Expr& row, const ir::Expr& col)>& body);

enum class Combine { kSum, kMax };

// dst[dst_index] = init combined with value(col) for every col in [0, width): SIMD partial
// results in a local buffer (several vectors wide, for independent chains), folded in halves at
// the end. `value` must be straight-line.
ir::Stmt row_reduce(Combine combine, int64_t width, const ops::TargetInfo& target,
                    const std::function<ir::Expr(const ir::Expr& col)>& value,
                    const ir::Buffer& dst, const ir::Expr& dst_index, const ir::Expr& init);

}  // namespace kiln::compiler
