#include "frontend/workload_mapping.h"

#include <algorithm>

namespace kiln::frontend {

namespace {

Status not_expressible(const Graph& graph, const Node& node, const std::string& why) {
  return InvalidArgument(graph.source + ": " + node.describe() + ": " + why);
}

// Padding of one spatial axis as [begin, end], after resolving auto_pad.
struct AxisPad {
  int64_t begin = 0, end = 0;
};

Result<std::vector<AxisPad>> conv_pads(const Graph& graph, const Node& node,
                                       const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& kernel,
                                       const std::vector<int64_t>& stride,
                                       const std::vector<int64_t>& dilation) {
  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  std::vector<AxisPad> pads(2);
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> p = node.attr_ints("pads", {0, 0, 0, 0});
    if (p.size() != 4) return not_expressible(graph, node, "pads must have 4 values");
    pads = {{p[0], p[2]}, {p[1], p[3]}};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int a = 0; a < 2; ++a) {
      int64_t out = (in[a] + stride[a] - 1) / stride[a];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * stride[a] + (kernel[a] - 1) * dilation[a] + 1 - in[a]);
      int64_t small = total / 2;
      pads[a] =
          auto_pad == "SAME_UPPER" ? AxisPad{small, total - small} : AxisPad{total - small, small};
    }
  } else if (auto_pad != "VALID") {
    return not_expressible(graph, node, "unknown auto_pad '" + auto_pad + "'");
  }
  return pads;
}

Result<std::optional<ops::Workload>> conv_workload(const Graph& graph, const Node& node) {
  const std::vector<int64_t>& x = graph.tensor(node.inputs[0]).shape;
  const std::vector<int64_t>& w = graph.tensor(node.inputs[1]).shape;
  const std::vector<int64_t>& y = graph.tensor(node.outputs[0]).shape;
  if (x.size() != 4 || w.size() != 4) {
    return not_expressible(graph, node,
                           "only 2-D convolutions (4-D NCHW data) have a kiln workload; its data "
                           "is " +
                               dims_text(x));
  }
  std::vector<int64_t> stride = node.attr_ints("strides", {1, 1});
  std::vector<int64_t> dilation = node.attr_ints("dilations", {1, 1});
  int64_t groups = node.attr_int("group", 1);
  std::vector<int64_t> kernel = {w[2], w[3]};
  if (stride.size() != 2 || dilation.size() != 2) {
    return not_expressible(graph, node, "strides and dilations must have 2 values");
  }
  if (dilation[0] != dilation[1]) {
    return not_expressible(graph, node,
                           "dilations " + dims_text(dilation) +
                               " differ per axis; kiln's conv workloads have one dilation");
  }
  std::vector<int64_t> in = {x[2], x[3]};
  KILN_ASSIGN_OR_RETURN(std::vector<AxisPad> pads,
                        conv_pads(graph, node, in, kernel, stride, dilation));
  // kiln pads both sides of an axis equally. Padding only at the end that no output reads
  // (the output size is the same with pad = begin on both sides) is still exact.
  for (int a = 0; a < 2; ++a) {
    int64_t out = (in[a] + 2 * pads[a].begin - dilation[a] * (kernel[a] - 1) - 1) / stride[a] + 1;
    if (pads[a].begin != pads[a].end && out != y[2 + a]) {
      return not_expressible(
          graph, node,
          std::string("asymmetric padding of the ") + (a == 0 ? "height" : "width") + " (" +
              std::to_string(pads[a].begin) + " before, " + std::to_string(pads[a].end) +
              " after) is not expressible in kiln's conv workloads, which pad both sides "
              "equally");
    }
  }
  int64_t c = x[1], k = w[0];
  ops::Workload out;
  out.params = {{"N", x[0]},
                {"C", c},
                {"H", x[2]},
                {"W", x[3]},
                {"R", kernel[0]},
                {"S", kernel[1]},
                {"stride_h", stride[0]},
                {"stride_w", stride[1]},
                {"pad_h", pads[0].begin},
                {"pad_w", pads[1].begin},
                {"dilation", dilation[0]}};
  if (groups == 1) {
    out.op = "conv2d";
    out.params["K"] = k;
    out.params["groups"] = 1;
  } else if (groups == c && k == c) {
    out.op = "depthwise_conv2d";
  } else {
    return not_expressible(graph, node,
                           "grouped convolution (group=" + std::to_string(groups) +
                               ", C=" + std::to_string(c) + ", K=" + std::to_string(k) +
                               ") has no kiln template: only group=1 (conv2d) and group=C=K "
                               "(depthwise_conv2d)");
  }
  return std::optional(out);
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// MatMul (numpy semantics) and Gemm (2-D, with transposes and a bias).
Result<std::optional<ops::Workload>> matmul_workload(const Graph& graph, const Node& node) {
  bool gemm = node.op_type == "Gemm";
  std::vector<int64_t> a = graph.tensor(node.inputs[0]).shape;
  std::vector<int64_t> b = graph.tensor(node.inputs[1]).shape;
  if (a.empty() || b.empty()) return not_expressible(graph, node, "a scalar operand");
  if (gemm && node.attr_int("transA", 0)) std::swap(a[0], a[1]);
  bool trans_b = gemm && node.attr_int("transB", 0);
  // Promote vectors as numpy does: A [K] -> [1, K], B [K] -> [K, 1].
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  int64_t k = a.back();
  int64_t n = trans_b ? b[b.size() - 2] : b.back();
  ops::Workload out;
  if (graph.is_constant(node.inputs[1]) && b.size() == 2) {
    int64_t bias = 0;
    if (gemm && node.inputs.size() > 2 && !node.inputs[2].empty() &&
        node.attr_float("beta", 1.0f) != 0.0f) {
      const std::vector<int64_t>& c = graph.tensor(node.inputs[2]).shape;
      bool per_column = (c.size() == 1 && c[0] == n) || (c.size() == 2 && c[0] == 1 && c[1] == n);
      bias = per_column ? 1 : 0;
    }
    out.op = "dense";
    out.params = {{"M", product(a, 0, a.size() - 1)}, {"N", n}, {"K", k}, {"bias", bias}};
    return std::optional(out);
  }
  // Batch dimensions broadcast as numpy does.
  std::vector<int64_t> batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  size_t rank = std::max(batch_a.size(), batch_b.size());
  batch_a.insert(batch_a.begin(), rank - batch_a.size(), 1);
  batch_b.insert(batch_b.begin(), rank - batch_b.size(), 1);
  int64_t batch = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (batch_a[i] != batch_b[i] && batch_a[i] != 1 && batch_b[i] != 1) {
      return not_expressible(graph, node, "batch dimensions do not broadcast");
    }
    batch *= std::max(batch_a[i], batch_b[i]);
  }
  out.op = "batch_matmul";
  out.params = {{"B", batch}, {"M", a[a.size() - 2]}, {"N", n}, {"K", k}};
  return std::optional(out);
}

}  // namespace

Result<std::optional<ops::Workload>> workload_of(const Graph& graph, const Node& node) {
  if (node.op_type == "Conv") return conv_workload(graph, node);
  if (node.op_type == "Gemm" || node.op_type == "MatMul") return matmul_workload(graph, node);
  return std::optional<ops::Workload>();
}

}  // namespace kiln::frontend
