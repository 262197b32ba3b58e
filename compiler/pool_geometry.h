// The geometry of one spatial axis of a MaxPool / AveragePool node (kernel, stride, dilation,
// pads after auto_pad), shared by the NCHW pools (lower_pool.cc) and the NCHW[x]c pools
// (lower_packed_pool.cc).
#pragma once

#include <cstdint>
#include <utility>

#include "common/status.h"
#include "frontend/graph.h"
#include "ir/ir.h"

namespace kiln::compiler {

// One spatial axis of a pool.
struct Axis {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
  // First and one-past-last output index whose tap `k` reads inside [0, in).
  std::pair<int64_t, int64_t> valid_outputs(int64_t k) const {
    int64_t offset = k * dilation - pad_begin;  // input index of output 0's tap k
    auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
    int64_t lo = std::max<int64_t>(0, ceil_div(-offset, stride));
    int64_t hi = std::min(out, ceil_div(in - offset, stride));
    return {lo, std::max(lo, hi)};
  }
  // Taps of output o's window within [lo, hi).
  int64_t taps_within(int64_t o, int64_t lo, int64_t hi) const {
    int64_t n = 0;
    for (int64_t k = 0; k < kernel; ++k) {
      int64_t i = o * stride - pad_begin + k * dilation;
      n += i >= lo && i < hi;
    }
    return n;
  }
  // What AveragePool divides output o's sum by along this axis: the taps of its window inside
  // the input, or inside input and pads with count_include_pad.
  int64_t window_count(int64_t o, bool include_pad) const {
    return include_pad ? taps_within(o, -pad_begin, in + pad_end) : taps_within(o, 0, in);
  }
};

// 1 / window_count(o) as an expression of output index `o`: 1 / kernel, selected otherwise at
// the border outputs whose windows count fewer taps.
ir::Expr window_scale(const Axis& a, bool include_pad, const ir::Expr& o);

// Axis `d` of `spatial` of the node's input extent `in` and output extent `out`, validated:
// kInvalidArgument (inconsistent) or kUnimplemented naming the node.
Result<Axis> make_axis(const frontend::Node& node, size_t d, size_t spatial, int64_t in,
                       int64_t out);

}  // namespace kiln::compiler
