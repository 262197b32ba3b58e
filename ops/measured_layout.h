// What kiln measures for a config: the program a builder builds, a runner times and the cost
// model describes. AutoTVM times conv2d_NCHWc.x86 and depthwise_conv2d_NCHWc.x86 with the data
// already packed to NCHW[ic_bn]c, the kernel pre-packed and the output left as NCHW[oc_bn]c
// (reference/autotvm.md §10: the layout transforms are skipped while tuning). kiln measures the
// same: the NCHWc convolutions are instantiated with data_block = tile_ic[-1] and a packed output,
// so their timed stage reads packed data and a packed kernel and writes the packed output; the
// data's padding copy and the kernel packing stay in untimed stages (TVM's tuning gets both
// ready). kiln's conv2d_NCHWc_winograd.x86 is measured the same way: its weight transform
// (G g G^T) is untimed like the kernel packing, its data, GEMM and output transforms are timed;
// so is kiln's conv2d_NCHWc_flat.x86 (1x1 convolutions in tiles of flattened output pixels).
// In a compiled model the layout transforms are kernels of their own (compiler/).
//
// This file is the one place that knows it: everything that instantiates a config in order to
// measure it (builder, cost model features, `kiln show`) goes through instantiate_measured, and
// the runner converts its NCHW random inputs and reference outputs with to_argument_layout and
// from_argument_layout, reading the layouts off the program's argument shapes.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"
#include "ops/config_space.h"
#include "ops/template.h"

namespace kiln::ops {

// The version of kiln's measurement semantics, stored with every record
// (store::Record::measure_version). Records of different versions time different programs and
// must never be compared.
//   1  records written before versions existed: the NCHWc convolutions' timed stage also wrote
//      the output back to NCHW (and the data arrived as NCHW)
//   2  the NCHWc convolutions are timed packed-in, packed-out, as AutoTVM times them; an
//      imported TVM log is in these semantics
//   3  conv2d_NCHWc_flat.x86 and dense_pack_ragged.x86 split their rows into tiles as even as they
//      go (ops/packed_matmul.h: EvenRowTiles); before, the rows left over were one last tile
inline constexpr int kMeasureVersion = 3;

// The oldest measurement version whose records time the same program as a new measurement of the
// template `template_name`: the version that last changed its measured program (2 for the NCHWc
// convolutions, 3 for the two ragged-row templates), and 1 for every other template (dense,
// batch_matmul: their programs did not change, so their older records stay comparable and are
// kept in use).
int oldest_comparable_version(std::string_view template_name);

// The template names whose oldest comparable version is above 1 (for queries that filter in SQL).
const std::vector<std::string_view>& templates_with_newer_measurements();

// The activation layout under which `tmpl` is measured with `config`: for the NCHWc
// convolutions, data as NCHW{tile_ic[-1]}c and a packed output; the default (NCHW) for others.
// A config without a usable tile_ic gets data_block 0 (instantiate then reports the config).
ActivationLayout measured_layout(const Template& tmpl, const ConfigEntity& config);

// The program kiln measures for `config`: tmpl.instantiate under measured_layout.
Result<ir::Program> instantiate_measured(const Template& tmpl, const Workload& w,
                                         const ConfigEntity& config, const TargetInfo& target);

// Converts a tensor from the template's (user) layout to a kernel argument's layout. Supported:
// equal shapes (a copy), and NCHW [n, c, h, w] to NCHW{b}c [n, c / b, h, w, b]. Errors
// (kInvalidArgument) name both shapes when the argument's layout is not one of these, or when
// `values` does not hold user_shape's elements.
Result<std::vector<float>> to_argument_layout(const std::vector<float>& values,
                                              const std::vector<int64_t>& user_shape,
                                              const std::vector<int64_t>& argument_shape);
// The inverse: a kernel argument of `argument_shape` (`values` holds its elements) back to the
// template's layout.
Result<std::vector<float>> from_argument_layout(const float* values,
                                                const std::vector<int64_t>& argument_shape,
                                                const std::vector<int64_t>& user_shape);

}  // namespace kiln::ops
