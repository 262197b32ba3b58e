// An operator: what kiln knows of one workload operator (e.g. "dense") beyond its schedule
// templates (ops/template.h): which ONNX nodes it maps and how (node -> workload), how a compiled
// model binds a node's tensors to its kernels' arguments, and how TVM task args read back into a
// workload. Each operator file (ops/<op>.cc) defines its Operator next to its templates; the
// registry (ops/registry.h) lists them, and the frontend, compiler, store, CLI and daemon consult
// it instead of naming operators.
//
// Operators are stateless and thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ops/node_view.h"
#include "ops/workload.h"

namespace kiln::ops {

// How a compiled model (compiler/compile_model.cc) gives an operator's binding the values of a
// node's tensors. Values are the model's value ids; each call may add a layout kernel or a
// constant, in call order, so a binding asks for its arguments in kernel argument order.
class ArgumentBinder {
 public:
  virtual ~ArgumentBinder() = default;
  // The tensor in its logical layout.
  virtual Result<int> value(const std::string& tensor) = 0;
  // The tensor as the kernel reads its data (the producer's NCHW{b}c value when the kernel's
  // ActivationLayout takes it packed, else value()).
  virtual Result<int> activation(const std::string& tensor) = 0;
  // An operand of a matrix product in the [batch..., rows, cols] layout a template takes, rows
  // and columns swapped when `transpose` (a layout kernel when the tensor is not already so).
  virtual Result<int> operand(const std::string& tensor, const std::vector<int64_t>& batch,
                              bool transpose) = 0;
  // A constant of n zeros, for a template bias the node does not have.
  virtual int zero_bias(int64_t n) = 0;
};

// A node's kernel arguments, and what the node adds to the kernel's output:
// node output = scale * kernel output (+ addend_scale * addend), before any fused epilogue.
struct Binding {
  std::vector<int> args;  // the template's inputs, in kernel argument order
  float scale = 1.0f;
  std::string addend;  // a tensor broadcast onto the output ("" for none)
  float addend_scale = 1.0f;
};

class Operator {
 public:
  virtual ~Operator() = default;

  virtual std::string_view name() const = 0;  // the workload operator, e.g. "dense"

  // The ONNX op types whose nodes workload_of may claim (e.g. "Gemm", "MatMul"); the frontend
  // accepts them at import.
  virtual std::vector<std::string> onnx_ops() const { return {}; }

  // The node's workload (not normalized), nullopt when the node is not this operator's (another
  // operator of the same ONNX op type may claim it), or an error saying why kiln's workloads
  // cannot express it. Registered operators are asked in registry order; the first workload or
  // error wins.
  virtual Result<std::optional<Workload>> workload_of(const NodeView& node) const {
    (void)node;
    return std::optional<Workload>();
  }

  // TVM task args (autotvm.md §2) -> the workload's parameters: the inverse of the templates'
  // Template::tvm_args (store/tvm_args.h checks the round trip). REQUIRES: args is a list.
  virtual Result<Workload> from_tvm_args(const nlohmann::json& args) const = 0;

  // The workload operators that naming this one in a selection (`kiln tune --ops`, a job file's
  // ops) selects besides itself; conv2d's is depthwise_conv2d (ONNX Conv nodes it leaves to it).
  virtual std::vector<std::string_view> also_selects() const { return {}; }

  // True for the convolutions: their kernels read a producer's NCHW{b}c output and keep their
  // own packed (ActivationLayout), planned across the graph (compiler/layout_plan.h).
  virtual bool packed_activations() const { return false; }

  // The kernel arguments of `node`, whose workload `w` (normalized by the chosen template) this
  // operator's workload_of gave.
  virtual Result<Binding> bind(const NodeView& node, const Workload& w,
                               ArgumentBinder& binder) const = 0;
};

}  // namespace kiln::ops
