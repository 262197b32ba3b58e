#include "frontend/model_checks.h"

#include <onnx/onnx_pb.h>

#include <set>

#include "frontend/onnx_convert.h"
#include "ops/limits.h"

namespace kiln::frontend {

namespace {

Status bad_node(const std::string& source, const Node& node, const std::string& why) {
  return InvalidArgument(source + ": " + node.describe() + ": " + why);
}

// The attribute's values, when it is present as a list of ints.
const std::vector<int64_t>* ints_attr(const Node& node, const std::string& key) {
  auto it = node.attrs.find(key);
  return it == node.attrs.end() ? nullptr : std::get_if<std::vector<int64_t>>(&it->second);
}

Status check_at_least(const std::string& source, const Node& node, const std::string& key,
                      int64_t least) {
  const std::vector<int64_t>* values = ints_attr(node, key);
  if (!values) return Status::Ok();
  for (int64_t v : *values) {
    if (v < least) {
      return bad_node(source, node,
                      key + " " + dims_text(*values) + ": every value must be at least " +
                          std::to_string(least));
    }
  }
  return Status::Ok();
}

Status check_conv(const Graph& graph, const Node& node) {
  const std::vector<int64_t>& x = graph.tensor(node.inputs[0]).shape;
  const std::vector<int64_t>& w = graph.tensor(node.inputs[1]).shape;
  auto fail = [&](const std::string& why) { return bad_node(graph.source, node, why); };
  if (x.size() < 3 || w.size() != x.size()) {
    return fail("data " + dims_text(x) + " and weight " + dims_text(w) +
                " must have the same rank, at least 3");
  }
  int64_t group = node.attr_int("group", 1);
  if (group < 1 || x[1] % group != 0 || w[1] * group != x[1] || w[0] % group != 0) {
    return fail("data " + dims_text(x) + " has " + std::to_string(x[1]) +
                " channels, which the weight " + dims_text(w) +
                " with group=" + std::to_string(group) +
                " does not match (needs channels = weight[1] x group, "
                "and weight[0] a multiple of group)");
  }
  std::vector<int64_t> spatial(w.begin() + 2, w.end());
  if (const std::vector<int64_t>* kernel = ints_attr(node, "kernel_shape")) {
    if (*kernel != spatial) {
      return fail("kernel_shape " + dims_text(*kernel) + " contradicts the weight " + dims_text(w) +
                  " (kernel " + dims_text(spatial) + ")");
    }
  }
  if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
    const std::vector<int64_t>& b = graph.tensor(node.inputs[2]).shape;
    if (b != std::vector<int64_t>{w[0]}) {
      return fail("bias " + dims_text(b) + " does not match the weight " + dims_text(w) +
                  " (needs " + std::to_string(w[0]) + ")");
    }
  }
  return Status::Ok();
}

Status check_matmul(const Graph& graph, const Node& node) {
  bool gemm = node.op_type == "Gemm";
  std::vector<int64_t> a = graph.tensor(node.inputs[0]).shape;
  std::vector<int64_t> b = graph.tensor(node.inputs[1]).shape;
  std::string operands = "A " + dims_text(a) + " and B " + dims_text(b);
  auto fail = [&](const std::string& why) { return bad_node(graph.source, node, why); };
  if (gemm) {
    if (a.size() != 2 || b.size() != 2) return fail(operands + " must both be 2-D");
    bool trans_a = node.attr_int("transA", 0) != 0, trans_b = node.attr_int("transB", 0) != 0;
    int64_t ka = trans_a ? a[0] : a[1], kb = trans_b ? b[1] : b[0];
    if (ka != kb) {
      return fail(operands + " (transA=" + std::to_string(trans_a) +
                  ", transB=" + std::to_string(trans_b) +
                  ") do not agree on the reduction length: " + std::to_string(ka) + " against " +
                  std::to_string(kb));
    }
    return Status::Ok();
  }
  if (a.empty() || b.empty()) return fail(operands + ": a scalar operand");
  int64_t ka = a.back(), kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (ka != kb) {
    return fail(operands + " do not agree on the reduction length: " + std::to_string(ka) +
                " against " + std::to_string(kb));
  }
  return Status::Ok();
}

// Every operand of a tunable operator must be a workload kiln can build: no empty dimension and
// none beyond ops/limits.h's.
Status check_limits(const Graph& graph, const Node& node) {
  for (const std::string& name : node.inputs) {
    if (name.empty()) continue;
    const std::vector<int64_t>& shape = graph.tensor(name).shape;
    int64_t elements = 1;
    for (int64_t d : shape) {
      if (d < 1) {
        return bad_node(graph.source, node,
                        "operand '" + name + "' " + dims_text(shape) + " has an empty dimension");
      }
      if (d > ops::kMaxDim || elements > ops::kMaxTensorElements / d) {
        return bad_node(
            graph.source, node,
            "operand '" + name + "' " + dims_text(shape) + ": " + ops::kShapeLimitsText);
      }
      elements *= d;
    }
  }
  return Status::Ok();
}

}  // namespace

Status check_graph_structure(const onnx::GraphProto& graph, const std::string& source) {
  if (graph.node_size() == 0) return InvalidArgument(source + ": the graph has no nodes");
  std::set<std::string> made, inputs;
  for (const onnx::TensorProto& t : graph.initializer()) made.insert(t.name());
  for (const onnx::ValueInfoProto& v : graph.input()) {
    if (!made.count(v.name())) inputs.insert(v.name());
  }
  for (const onnx::NodeProto& node : graph.node())
    made.insert(node.output().begin(), node.output().end());
  for (const onnx::ValueInfoProto& v : graph.output()) {
    if (inputs.count(v.name())) {
      return InvalidArgument(source + ": graph output '" + v.name() +
                             "' is a graph input; kiln compiles outputs that nodes compute");
    }
    if (v.name().empty() || !made.count(v.name())) {
      return InvalidArgument(
          source + ": graph output '" + v.name() +
          "' names no tensor of the graph (no node, initializer or input makes it)");
    }
  }
  return Status::Ok();
}

Status check_window_attributes(const onnx::GraphProto& graph, const std::string& source) {
  for (int k = 0; k < graph.node_size(); ++k) {
    const onnx::NodeProto& proto = graph.node(k);
    const std::string& op = proto.op_type();
    if (op != "Conv" && op != "MaxPool" && op != "AveragePool") continue;
    KILN_ASSIGN_OR_RETURN(Node node, node_from_proto(proto, k, source));
    for (const char* key : {"strides", "dilations", "kernel_shape"}) {
      KILN_RETURN_IF_ERROR(check_at_least(source, node, key, 1));
    }
    KILN_RETURN_IF_ERROR(check_at_least(source, node, "pads", 0));
    if (node.attr_int("group", 1) < 1) {
      return bad_node(source, node,
                      "group " + std::to_string(node.attr_int("group", 1)) + " must be at least 1");
    }
  }
  return Status::Ok();
}

Status check_operands(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (node.op_type == "Conv") {
      KILN_RETURN_IF_ERROR(check_limits(graph, node));
      KILN_RETURN_IF_ERROR(check_conv(graph, node));
    } else if (node.op_type == "Gemm" || node.op_type == "MatMul") {
      KILN_RETURN_IF_ERROR(check_limits(graph, node));
      KILN_RETURN_IF_ERROR(check_matmul(graph, node));
    }
  }
  return Status::Ok();
}

}  // namespace kiln::frontend
