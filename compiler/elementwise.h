// Elementwise operators as expressions, so that the compiler can fuse them: into one kernel per
// chain, or into the write-back of the conv / dense kernel that produces their input.
//
// Elementwise ops: Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Exp, Sqrt,
// Pow, Abs, Neg, Reciprocal, Add, Sub, Mul, Div, Max, Min (numpy broadcasting, Max/Min variadic),
// and BatchNormalization in inference mode (its scale/bias/mean/var inputs broadcast along
// axis 1). Parameter inputs (Clip's min and max) are graph constants read at lowering time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "frontend/graph.h"
#include "ir/ir.h"
#include "ops/template.h"

namespace kiln::compiler {

bool is_elementwise(const frontend::Node& node);

// Elementwise nodes computing one tensor: `nodes` in graph order; the last node's first output
// is the group's output, and every other node's output is read only by nodes of the group.
struct ElementwiseGroup {
  std::vector<const frontend::Node*> nodes;
  const std::string& output() const;
};

// Tensors the group reads that no node of the group writes (data inputs only), in first-use
// order.
std::vector<std::string> external_inputs(const frontend::Graph& graph,
                                         const ElementwiseGroup& group);

// Loads external tensor `name` at `idx`, one index per dimension of that tensor's own shape.
using TensorLoader =
    std::function<ir::Expr(const std::string& name, const std::vector<ir::Expr>& idx)>;

// The group's output at coordinates `out_idx` (one per dimension of the output's shape): each
// external tensor is loaded through `load` at the coordinates numpy broadcasting maps `out_idx`
// to (BatchNormalization's per-channel inputs: out_idx[1]). Constants may be loaded through
// `load` too (the caller decides whether they are buffers); a scalar constant may be folded.
Result<ir::Expr> group_value(const frontend::Graph& graph, const ElementwiseGroup& group,
                             const std::vector<ir::Expr>& out_idx, const TensorLoader& load);

// A kernel for the group: argument buffers = external_inputs(group), then the output.
Result<ir::Program> lower_elementwise_group(const frontend::Graph& graph,
                                            const ElementwiseGroup& group,
                                            const ops::TargetInfo& target);

}  // namespace kiln::compiler
