#include "compiler/pool_geometry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/lowering_util.h"

namespace kiln::compiler {

using frontend::Node;

Result<Axis> make_axis(const Node& node, size_t d, size_t spatial, int64_t in, int64_t out) {
  Axis a;
  a.in = in;
  a.out = out;
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape", {});
  std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations = node.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    return inconsistent(node, "kernel_shape, strides, dilations or pads do not match the " +
                                  std::to_string(spatial) + " spatial dimensions");
  }
  a.kernel = kernel[d];
  a.stride = strides[d];
  a.dilation = dilations[d];
  a.pad_begin = pads[d];
  a.pad_end = pads[spatial + d];
  if (a.kernel < 1 || a.stride < 1 || a.dilation < 1 || a.pad_begin < 0 || a.pad_end < 0) {
    return inconsistent(node, "kernel, strides and dilations must be >= 1, pads >= 0");
  }
  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  int64_t span = (a.kernel - 1) * a.dilation + 1;
  if (auto_pad == "VALID") {
    a.pad_begin = a.pad_end = 0;
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    int64_t total =
        std::max<int64_t>(0, ((in + a.stride - 1) / a.stride - 1) * a.stride + span - in);
    a.pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    a.pad_end = total - a.pad_begin;
  } else if (auto_pad != "NOTSET") {
    return unsupported(node, "auto_pad '" + auto_pad + "'");
  }
  // The output size is the graph's (floor or ceil_mode); every window must touch the input.
  int64_t ceil_out = (in + a.pad_begin + a.pad_end - span + a.stride - 1) / a.stride + 1;
  if (out < 1 || out > ceil_out || a.taps_within(0, 0, in) == 0 ||
      a.taps_within(out - 1, 0, in) == 0) {
    return inconsistent(node, "output size " + std::to_string(out) + " does not fit input " +
                                  std::to_string(in) + " with kernel " + std::to_string(a.kernel) +
                                  ", stride " + std::to_string(a.stride) + " and pads " +
                                  std::to_string(a.pad_begin) + "+" + std::to_string(a.pad_end));
  }
  return a;
}

ir::Expr window_scale(const Axis& a, bool include_pad, const ir::Expr& o) {
  ir::Expr scale = ir::f32(1.0 / static_cast<double>(a.kernel));
  for (int64_t i = a.out; i-- > 0;) {
    const int64_t n = a.window_count(i, include_pad);
    if (n != a.kernel) {
      scale = ir::select(o == ir::Expr(i), ir::f32(1.0 / static_cast<double>(n)), scale);
    }
  }
  return scale;
}

}  // namespace kiln::compiler
