// The direct conv2d kernel that conv2d_NCHWc.x86 (TVM's blocks, which divide the channels) and
// conv2d_NCHWc_ragged.x86 (output blocks of whole vectors that need not divide K) share: TVM's
// knobs after the channel blocks (tile_ow, then tile_oh for 1x1 kernels or unroll_kw), their
// reading from a config, and the weight packing and reduction of conv2d_avx_common.py /
// conv2d_avx_1x1.py:
//   3x3 etc., unroll_kw: ic_chunk, kh, ic_block, kw (unrolled), ow_block (unrolled), oc_block (vec)
//   3x3 etc., !unroll_kw: ic_chunk, kh, kw, ic_block, ow_block (unrolled), oc_block (vec)
//   1x1:                  ic_chunk, ic_block, oh_block (unrolled), ow_block (unrolled), oc_block
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ops/config_space.h"
#include "ops/conv_common.h"

namespace kiln::ops::conv {

inline bool is_1x1(const Geometry& g) { return g.r == 1 && g.s == 1; }

// TVM's output height and width for the tuning space, which ignore dilation (so that config
// indices match TVM logs; tiles past the real output are computed on padding and dropped).
std::pair<int64_t, int64_t> space_output_size(const Geometry& g);

// Defines tile_ow = split(out width, policy "verbose", inner <= 64), then tile_oh = [1, 2]
// (1x1 kernels; [1] for a one-row output) or unroll_kw = [true, false], in TVM's order.
void define_tile_knobs(const Geometry& g, ConfigSpace* space);

// The out-row factors tile_oh offers ([1] for kernels other than 1x1, which have no tile_oh).
std::vector<int64_t> oh_factors(const Geometry& g);
// The tile knobs' entities of a default tile: tile_ow of its reg_n, and tile_oh of its
// oh_factor or unroll_kw = false (TVM's fallback value).
std::vector<std::pair<std::string, Entity>> default_tile_knobs(const Geometry& g,
                                                               const DefaultTile& tile);

// What a config's tile knobs say, for blocks of oc_bn output channels.
struct Conv2dTile {
  Tiling tiling;
  bool unroll_kw = false;
};
// An InstantiationError naming the knob that is missing or holds an unusable value.
Result<Conv2dTile> read_tile_knobs(const Geometry& g, const ConfigEntity& config, int64_t oc_bn);

// The conv2d_NCHWc DirectConv for blocks ic_bn (dividing C/groups) and tile.tiling.oc_bn
// (dividing K/groups, or, for groups = 1, ragged: the packed weights' padding lanes are zeros).
// With groups > 1 each output chunk reduces over its group's input chunks (group_conv2d).
DirectConv conv2d_direct(const Geometry& g, int64_t ic_bn, const Conv2dTile& tile);

// The base of kiln's own conv2d templates (Winograd, ragged blocks): an extra template
// (Template::extra) of conv2d's workloads, tensors, FLOPs (the direct convolution's, so that
// GFLOPS compare), reference and TVM args, all conv2d_NCHWc.x86's.
class Conv2dVariant : public Template {
 public:
  std::string_view op() const override { return "conv2d"; }
  bool extra() const override { return true; }
  std::vector<TensorSpec> inputs(const Workload& w) const override;
  std::vector<TensorSpec> outputs(const Workload& w) const override;
  double flop(const Workload& w) const override;
  void reference(const Workload& w, const std::vector<const float*>& inputs,
                 const std::vector<float*>& outputs) const override;
  nlohmann::json tvm_args(const Workload& w) const override;

 protected:
  // conv2d_NCHWc.x86's normalization, its error prefixed with this template's name.
  Result<Workload> normalize_as_direct(const Workload& w) const;
  // An InvalidArgument for `w`, naming this template: "<name> workload <w>: <why>".
  Status refuse(const Workload& w, const std::string& why) const;
};

}  // namespace kiln::ops::conv
