// conv2d_NCHWc.x86: TVM's x86 direct convolution (topi/x86/conv2d.py, conv2d_avx_common.py,
// conv2d_avx_1x1.py) for NCHW data, OIHW weights and an NCHW output with a bias.
//
// Workload: conv2d:N=,C=,H=,W=,K=,R=,S= with stride (1), pad (0), dilation (1), groups (1 only)
// and optionally stride_h/stride_w/pad_h/pad_w.
//
// Knobs (TVM's, in TVM's order): tile_ic = split(C), tile_oc = split(K), then the tile knobs of
// conv2d_direct.h: tile_ow = split(out width, policy "verbose", inner <= 64); then tile_oh =
// [1, 2] (1x1 kernels) or unroll_kw = [true, false]. As in TVM, tile_ow and tile_oh are sized
// from the output computed WITHOUT dilation, so that config indices match TVM logs; tiles past
// the real output are computed on padding and dropped.
//
// Program: pack data to a padded NCHW{ic_bn}c workspace and the weights to OIHW{ic_bn}i{oc_bn}o
// (untimed, as TVM's tuning takes both pre-packed), then the timed compute stage of
// conv_common.h with TVM's reduction order (conv2d_direct.h).
#include <utility>

#include "ops/conv2d_direct.h"
#include "ops/conv_common.h"
#include "ops/default_config.h"
#include "ops/registry.h"

namespace kiln::ops {

namespace {

using conv::is_1x1;
using conv::space_output_size;

class Conv2dNchwcTemplate final : public Template {
 public:
  std::string_view name() const override { return "conv2d_NCHWc.x86"; }
  std::string_view op() const override { return "conv2d"; }

  Result<Workload> normalize(const Workload& w) const override {
    KILN_ASSIGN_OR_RETURN(Workload out, conv::normalize(w, name(),
                                                        {{"N", {}},
                                                         {"C", {}},
                                                         {"H", {}},
                                                         {"W", {}},
                                                         {"K", {}},
                                                         {"R", {}},
                                                         {"S", {}},
                                                         {"dilation", 1},
                                                         {"groups", 1}}));
    int64_t groups = out.at("groups");
    if (groups == 1) return out;
    std::string where = std::string(name()) + " workload " + w.to_string() + ": ";
    if (groups == out.at("C") && groups == out.at("K")) {
      Workload depthwise = out;
      depthwise.op = "depthwise_conv2d";
      depthwise.params.erase("K");
      depthwise.params.erase("groups");
      return InvalidArgument(where + "groups=" + std::to_string(groups) +
                             " is a depthwise convolution, which conv2d_NCHWc.x86 does not "
                             "support (only groups=1): use the workload " +
                             depthwise.to_string());
    }
    Workload grouped = out;
    grouped.op = "group_conv2d";
    return InvalidArgument(where + "grouped convolution (groups=" + std::to_string(groups) +
                           ") is group_conv2d_nchw.x86's: use the workload " + grouped.to_string());
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return {{"data", {g.n, g.c, g.h, g.w}}, {"weight", {g.k, g.c, g.r, g.s}}, {"bias", {g.k}}};
  }

  std::vector<TensorSpec> outputs(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return {{"output", {g.n, g.k, g.p, g.q}}};
  }

  double flop(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return 2.0 * g.n * g.k * g.p * g.q * g.c * g.r * g.s;
  }

  ConfigSpace space(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    ConfigSpace space;
    space.define_split("tile_ic", g.c);
    space.define_split("tile_oc", g.k);
    conv::define_tile_knobs(g, &space);
    return space;
  }

  // TVM's _fallback_schedule of conv2d_avx_common / conv2d_avx_1x1. One difference: for 1x1
  // kernels TVM may pick an oh_factor outside the tile_oh knob ([1, 2]); here it is the largest
  // knob value that TVM's rule allows, so that the fallback is a config of the space.
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    auto [oh, ow] = space_output_size(g);
    ActivationBlocks blocks = conv::fallback_blocks(g, target);
    int64_t oc_bn = blocks.out, ic_bn = blocks.in;
    std::vector<std::pair<std::string, Entity>> entities = {
        {"tile_ic", SplitEntity{{g.c / ic_bn, ic_bn}}},
        {"tile_oc", SplitEntity{{g.k / oc_bn, oc_bn}}}};
    if (is_1x1(g)) {
      int64_t ow_factor = largest_divisor_at_most(ow, 31);
      int64_t oh_factor = oh % 2 == 0 && 2 * ow_factor < 32 ? 2 : 1;
      entities.push_back({"tile_ow", SplitEntity{{ow / ow_factor, ow_factor}}});
      entities.push_back({"tile_oh", OtherOptionEntity{oh_factor}});
    } else {
      int64_t reg_n = largest_divisor_at_most(ow, 31);
      entities.push_back({"tile_ow", SplitEntity{{ow / reg_n, reg_n}}});
      entities.push_back({"unroll_kw", OtherOptionEntity{false}});
    }
    Result<ConfigEntity> config = space.make_config(std::move(entities));
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }

  // kiln's default (ops/default_config.h): the register tile for the target's registers.
  // unroll_kw stays TVM's fallback value.
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    auto [oh, ow] = space_output_size(g);
    conv::DefaultTile tile =
        conv::default_tile(g, false, ow, split_inner_factors(*space.find_knob("tile_ow")), oh,
                           conv::oh_factors(g), target);
    std::vector<std::pair<std::string, Entity>> entities = {
        {"tile_ic", SplitEntity{{g.c / tile.blocks.in, tile.blocks.in}}},
        {"tile_oc", SplitEntity{{g.k / tile.blocks.out, tile.blocks.out}}}};
    for (auto& knob : conv::default_tile_knobs(g, tile)) entities.push_back(std::move(knob));
    Result<ConfigEntity> config = space.make_config(std::move(entities));
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    conv::Geometry g = conv::geometry(w);
    KILN_ASSIGN_OR_RETURN(ActivationBlocks channels, conv::channel_blocks(g, config));
    const int64_t ic_bn = channels.in, oc_bn = channels.out;
    KILN_ASSIGN_OR_RETURN(conv::Conv2dTile tile, conv::read_tile_knobs(g, config, oc_bn));
    return conv::direct_conv_program(g, conv::conv2d_direct(g, ic_bn, tile), target, layout);
  }

  std::optional<ActivationBlocks> activation_blocks(const Workload& w,
                                                    const ConfigEntity& config) const override {
    return conv::nchwc_blocks(conv::geometry(w), config);
  }

  void reference(const Workload& w, const std::vector<const float*>& inputs,
                 const std::vector<float*>& outputs) const override {
    conv::reference(conv::geometry(w), /*depthwise=*/false, inputs[0], inputs[1], inputs[2],
                    outputs[0]);
  }

  nlohmann::json tvm_args(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return conv::tvm_args(g, {g.k, g.c, g.r, g.s});
  }
};

// The operator: ONNX Conv nodes of group 1. A depthwise node (group = C = K) is
// depthwise_conv2d's, other groups group_conv2d's. Naming conv2d selects both (TVM's nn.conv2d
// covers them).
class Conv2dOperator final : public conv::ConvOperator {
 public:
  std::string_view name() const override { return "conv2d"; }

  std::vector<std::string_view> also_selects() const override {
    return {depthwise_conv2d_operator().name(), group_conv2d_operator().name()};
  }

  Result<std::optional<Workload>> workload_of(const NodeView& node) const override {
    KILN_ASSIGN_OR_RETURN(conv::ConvNode conv, conv::read_conv_node(node));
    // Depthwise (group = C = K) and other groups are depthwise_conv2d's and group_conv2d's.
    if (conv.groups != 1) return std::optional<Workload>();
    Workload out = std::move(conv.workload);
    out.op = "conv2d";
    out.params["K"] = conv.k;
    out.params["groups"] = 1;
    return std::optional(out);
  }

 protected:
  bool has_k() const override { return true; }
};

}  // namespace

const Operator& conv2d_operator() {
  static const Conv2dOperator kOperator;
  return kOperator;
}

const Template& conv2d_nchwc_template() {
  static const Conv2dNchwcTemplate kTemplate;
  return kTemplate;
}

}  // namespace kiln::ops
