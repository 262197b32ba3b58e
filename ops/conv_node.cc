// The conv operators' side of conv_common.h: ONNX Conv nodes -> workloads, TVM args -> workloads,
// and a conv node's kernel arguments.
#include <algorithm>

#include "ops/conv_common.h"
#include "ops/tvm_args_parse.h"

namespace kiln::ops::conv {

namespace {

// Padding of one spatial axis as [begin, end], after resolving auto_pad.
struct AxisPad {
  int64_t begin = 0, end = 0;
};

Result<std::vector<AxisPad>> conv_pads(const NodeView& node, const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& kernel,
                                       const std::vector<int64_t>& stride,
                                       const std::vector<int64_t>& dilation) {
  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  std::vector<AxisPad> pads(2);
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> p = node.attr_ints("pads", {0, 0, 0, 0});
    if (p.size() != 4) return node.not_expressible("pads must have 4 values");
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
    return node.not_expressible("unknown auto_pad '" + auto_pad + "'");
  }
  return pads;
}

}  // namespace

Result<ConvNode> read_conv_node(const NodeView& node) {
  const std::vector<int64_t>& x = node.shape(node.inputs()[0]);
  const std::vector<int64_t>& w = node.shape(node.inputs()[1]);
  const std::vector<int64_t>& y = node.shape(node.outputs()[0]);
  if (x.size() != 4 || w.size() != 4) {
    return node.not_expressible(
        "only 2-D convolutions (4-D NCHW data) have a kiln workload; its data "
        "is " +
        dims_text(x));
  }
  std::vector<int64_t> stride = node.attr_ints("strides", {1, 1});
  std::vector<int64_t> dilation = node.attr_ints("dilations", {1, 1});
  std::vector<int64_t> kernel = {w[2], w[3]};
  if (stride.size() != 2 || dilation.size() != 2) {
    return node.not_expressible("strides and dilations must have 2 values");
  }
  if (dilation[0] != dilation[1]) {
    return node.not_expressible("dilations " + dims_text(dilation) +
                                " differ per axis; kiln's conv workloads have one dilation");
  }
  std::vector<int64_t> in = {x[2], x[3]};
  KILN_ASSIGN_OR_RETURN(std::vector<AxisPad> pads, conv_pads(node, in, kernel, stride, dilation));
  // kiln pads both sides of an axis equally. Padding only at the end that no output reads
  // (the output size is the same with pad = begin on both sides) is still exact.
  for (int a = 0; a < 2; ++a) {
    int64_t out = (in[a] + 2 * pads[a].begin - dilation[a] * (kernel[a] - 1) - 1) / stride[a] + 1;
    if (pads[a].begin != pads[a].end && out != y[2 + a]) {
      return node.not_expressible(
          std::string("asymmetric padding of the ") + (a == 0 ? "height" : "width") + " (" +
          std::to_string(pads[a].begin) + " before, " + std::to_string(pads[a].end) +
          " after) is not expressible in kiln's conv workloads, which pad both sides "
          "equally");
    }
  }
  ConvNode out;
  out.groups = node.attr_int("group", 1);
  out.c = x[1];
  out.k = w[0];
  out.workload.params = {{"N", x[0]},
                         {"C", out.c},
                         {"H", x[2]},
                         {"W", x[3]},
                         {"R", kernel[0]},
                         {"S", kernel[1]},
                         {"stride_h", stride[0]},
                         {"stride_w", stride[1]},
                         {"pad_h", pads[0].begin},
                         {"pad_w", pads[1].begin},
                         {"dilation", dilation[0]}};
  return out;
}

Result<Workload> ConvOperator::from_tvm_args(const nlohmann::json& args) const {
  Workload w;
  w.op = std::string(name());
  if (args.size() < 5) return InvalidArgument("too few args");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> data, tvm_tensor_dims(args[0], 4, "data"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, tvm_tensor_dims(args[1], 4, "kernel"));
  w.params["N"] = data[0];
  w.params["C"] = data[1];
  w.params["H"] = data[2];
  w.params["W"] = data[3];
  if (has_k()) w.params["K"] = kernel[0];
  w.params["R"] = kernel[2];
  w.params["S"] = kernel[3];
  KILN_ASSIGN_OR_RETURN(w.params["stride_h"], tvm_int_at(args[2], 0, "strides"));
  KILN_ASSIGN_OR_RETURN(w.params["stride_w"], tvm_int_at(args[2], 1, "strides"));
  KILN_ASSIGN_OR_RETURN(w.params["pad_h"], tvm_int_at(args[3], 0, "padding"));
  KILN_ASSIGN_OR_RETURN(w.params["pad_w"], tvm_int_at(args[3], 1, "padding"));
  KILN_ASSIGN_OR_RETURN(w.params["dilation"], tvm_int_at(args[4], 0, "dilation"));
  return w;
}

Result<Binding> ConvOperator::bind(const NodeView& node, const Workload&,
                                   ArgumentBinder& binder) const {
  const std::vector<std::string>& in = node.inputs();
  KILN_ASSIGN_OR_RETURN(int x, binder.activation(in[0]));
  KILN_ASSIGN_OR_RETURN(int w, binder.value(in[1]));
  int b = -1;
  if (in.size() > 2 && !in[2].empty()) {
    KILN_ASSIGN_OR_RETURN(b, binder.value(in[2]));
  } else {
    b = binder.zero_bias(node.shape(in[1])[0]);
  }
  Binding binding;
  binding.args = {x, w, b};
  return binding;
}

}  // namespace kiln::ops::conv
