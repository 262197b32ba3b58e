// Which nodes of a Graph are tunable, and as which kiln workload (ops/workload.h): each
// registered operator (ops/registry.h) maps the ONNX op types it names (Operator::onnx_ops), as
// TVM lowers ONNX (Conv -> conv2d or depthwise_conv2d, Gemm and MatMul -> dense or batch_matmul:
// see each operator's file). The frontend shows an operator the node through GraphNodeView.
// The workload is not normalized; each template normalizes it (ops/template.h).
#pragma once

#include <optional>

#include "common/status.h"
#include "frontend/graph.h"
#include "ops/node_view.h"
#include "ops/workload.h"

namespace kiln::frontend {

// A node of a graph as operators see it. REQUIRES: graph and node outlive the view.
class GraphNodeView final : public ops::NodeView {
 public:
  GraphNodeView(const Graph& graph, const Node& node) : graph_(graph), node_(node) {}

  const std::string& op_type() const override { return node_.op_type; }
  std::string where() const override { return graph_.source + ": " + node_.describe(); }
  const std::vector<std::string>& inputs() const override { return node_.inputs; }
  const std::vector<std::string>& outputs() const override { return node_.outputs; }
  const std::vector<int64_t>& shape(const std::string& tensor) const override {
    return graph_.tensor(tensor).shape;
  }
  bool is_constant(const std::string& tensor) const override { return graph_.is_constant(tensor); }
  int64_t attr_int(const std::string& key, int64_t fallback) const override {
    return node_.attr_int(key, fallback);
  }
  float attr_float(const std::string& key, float fallback) const override {
    return node_.attr_float(key, fallback);
  }
  std::string attr_string(const std::string& key, const std::string& fallback) const override {
    return node_.attr_string(key, fallback);
  }
  std::vector<int64_t> attr_ints(const std::string& key,
                                 const std::vector<int64_t>& fallback) const override {
    return node_.attr_ints(key, fallback);
  }

 private:
  const Graph& graph_;
  const Node& node_;
};

// The node's workload; nullopt for a node with no tunable compute (Relu, Add, pooling, ...).
// An error for a node of an operator's ONNX op type that kiln's workloads cannot express, saying
// why (e.g. a grouped convolution whose group does not divide its channels, asymmetric padding
// that changes the output size, different dilations per axis, data that is not 4-D).
Result<std::optional<ops::Workload>> workload_of(const Graph& graph, const Node& node);

}  // namespace kiln::frontend
