// group_conv2d_nchw.x86: TVM's x86 grouped convolution (topi/x86/group_conv2d.py, "GSPC") for
// NCHW data, a [K, C/groups, R, S] weight and an NCHW output with a bias: `groups` independent
// convolutions of C/groups input to K/groups output channels (RegNet's and ResNeXt's convs).
//
// Workload: group_conv2d:N=,C=,H=,W=,K=,R=,S=,groups= (2 or more, dividing C and K, and not the
// depthwise case groups = C = K) with stride (1), pad (0), dilation (1) and optionally
// stride_h/stride_w/pad_h/pad_w.
//
// Knobs (TVM's, in TVM's order): tile_ic = split(C), tile_oc = split(K), tile_ow = split(out
// width, policy "factors", inner <= 64), unroll_kw = [true, false]. TVM's schedule needs
// tile_ic[-1] to divide C/groups and tile_oc[-1] to divide K/groups and fails to build the other
// configs of its space; kiln builds every config, with the largest block of the knob's value
// that divides (their gcd), so that indices stay TVM's and no config is lost.
//
// Program: conv2d_NCHWc.x86's (conv2d_direct.h, conv_common.h), whose output chunks each lie in
// one group and reduce over that group's input chunks only: packed data NCHW{ic_bn}c, weights
// [K/oc_bn, C/groups/ic_bn, R, S, ic_bn, oc_bn] (untimed), the timed compute stage with TVM's
// reduction order ic_chunk, kh, kw (unroll_kw: kh, ic_block, kw), ic_block, ow_block, oc_block.
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "ops/conv2d_direct.h"
#include "ops/conv_common.h"
#include "ops/default_config.h"
#include "ops/registry.h"
#include "ops/tvm_args_parse.h"

namespace kiln::ops {

namespace {

// TVM's output width for the tuning space (with dilation, as group_conv2d.py computes it).
int64_t space_out_width(const conv::Geometry& g) { return g.q; }

class GroupConv2dTemplate final : public Template {
 public:
  std::string_view name() const override { return "group_conv2d_nchw.x86"; }
  std::string_view op() const override { return "group_conv2d"; }

  Result<Workload> normalize(const Workload& w) const override {
    KILN_ASSIGN_OR_RETURN(Workload out, conv::normalize(w, name(),
                                                        {{"N", {}},
                                                         {"C", {}},
                                                         {"H", {}},
                                                         {"W", {}},
                                                         {"K", {}},
                                                         {"R", {}},
                                                         {"S", {}},
                                                         {"groups", {}, 2},
                                                         {"dilation", 1}}));
    const int64_t groups = out.at("groups"), c = out.at("C"), k = out.at("K");
    std::string where = std::string(name()) + " workload " + w.to_string() + ": ";
    if (c % groups != 0 || k % groups != 0) {
      return InvalidArgument(where + "groups=" + std::to_string(groups) +
                             " must divide C=" + std::to_string(c) + " and K=" + std::to_string(k));
    }
    if (groups == c && k == c) {
      return InvalidArgument(where +
                             "groups=C=K is a depthwise convolution: use a "
                             "depthwise_conv2d workload");
    }
    return out;
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return {{"data", {g.n, g.c, g.h, g.w}},
            {"weight", {g.k, g.c / g.groups, g.r, g.s}},
            {"bias", {g.k}}};
  }

  std::vector<TensorSpec> outputs(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return {{"output", {g.n, g.k, g.p, g.q}}};
  }

  double flop(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return 2.0 * g.n * g.k * g.p * g.q * (g.c / g.groups) * g.r * g.s;
  }

  ConfigSpace space(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    ConfigSpace space;
    space.define_split("tile_ic", g.c);
    space.define_split("tile_oc", g.k);
    SplitOptions ow_options;
    ow_options.filter = [](const SplitEntity& e) { return e.size.back() <= 64; };
    space.define_split("tile_ow", space_out_width(g), ow_options);
    space.define_knob("unroll_kw", {true, false});
    return space;
  }

  // TVM's _fallback_schedule: oc_bn the largest divisor of K/groups at most the SIMD width,
  // ic_bn the largest divisor of C/groups at most oc_bn, reg_n the largest divisor of the output
  // width at most 31, unroll_kw false.
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    const int64_t oc_bn = largest_divisor_at_most(g.k / g.groups, target.simd_lanes);
    const int64_t ic_bn = largest_divisor_at_most(g.c / g.groups, oc_bn);
    const int64_t ow = space_out_width(g), reg_n = largest_divisor_at_most(ow, 31);
    return make(space, g, {ic_bn, oc_bn}, SplitEntity{{ow / reg_n, reg_n}});
  }

  // kiln's default (ops/default_config.h): blocks of up to two whole vectors dividing a group's
  // channels, and the output columns whose accumulators fit the target's registers.
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    const ActivationBlocks blocks{
        channel_block(g.c / g.groups, conv::kDefaultBlockVectors, target),
        channel_block(g.k / g.groups, conv::kDefaultBlockVectors, target)};
    const int64_t ow = space_out_width(g);
    conv::DefaultTile tile = conv::register_tile(
        g, false, blocks, ow, split_inner_factors(*space.find_knob("tile_ow")), g.p, {1}, target);
    return make(space, g, blocks, two_way_split(ow, tile.reg_n));
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    conv::Geometry g = conv::geometry(w);
    KILN_ASSIGN_OR_RETURN(ActivationBlocks blocks, group_blocks(g, config));
    KILN_ASSIGN_OR_RETURN(int64_t reg_n, conv::split_inner(config, "tile_ow", 0));
    KILN_ASSIGN_OR_RETURN(nlohmann::json unroll, option(config, "unroll_kw"));
    if (!unroll.is_boolean()) {
      return InstantiationError("unroll_kw = " + unroll.dump() + " is not a boolean");
    }
    conv::DirectConv direct = conv::conv2d_direct(
        g, blocks.in, conv::Conv2dTile{{blocks.out, reg_n, 1}, unroll.get<bool>()});
    direct.name = "group_conv2d_NCHWc";
    return conv::direct_conv_program(g, direct, target, layout);
  }

  std::optional<ActivationBlocks> activation_blocks(const Workload& w,
                                                    const ConfigEntity& config) const override {
    Result<ActivationBlocks> blocks = group_blocks(conv::geometry(w), config);
    if (!blocks.ok()) return std::nullopt;
    return *blocks;
  }

  void reference(const Workload& w, const std::vector<const float*>& inputs,
                 const std::vector<float*>& outputs) const override {
    conv::reference(conv::geometry(w), /*depthwise=*/false, inputs[0], inputs[1], inputs[2],
                    outputs[0]);
  }

  // TVM's group_conv2d_nchw task: [data, kernel, [sh, sw], [pt, pl, pb, pr], [d, d], groups,
  // "float32"].
  nlohmann::json tvm_args(const Workload& w) const override {
    using nlohmann::json;
    conv::Geometry g = conv::geometry(w);
    return json::array({json::array({"TENSOR", {g.n, g.c, g.h, g.w}, "float32"}),
                        json::array({"TENSOR", {g.k, g.c / g.groups, g.r, g.s}, "float32"}),
                        {g.stride_h, g.stride_w},
                        {g.pad_h, g.pad_w, g.pad_h, g.pad_w},
                        {g.dilation, g.dilation},
                        g.groups,
                        "float32"});
  }

 private:
  // The blocks the program uses: the knobs' inner factors, each cut to its gcd with a group's
  // channels (see the file comment).
  static Result<ActivationBlocks> group_blocks(const conv::Geometry& g,
                                               const ConfigEntity& config) {
    KILN_ASSIGN_OR_RETURN(int64_t ic, conv::split_inner(config, "tile_ic", g.c));
    KILN_ASSIGN_OR_RETURN(int64_t oc, conv::split_inner(config, "tile_oc", g.k));
    return ActivationBlocks{std::gcd(ic, g.c / g.groups), std::gcd(oc, g.k / g.groups)};
  }

  static ConfigEntity make(const ConfigSpace& space, const conv::Geometry& g,
                           const ActivationBlocks& blocks, SplitEntity tile_ow) {
    Result<ConfigEntity> config =
        space.make_config({{"tile_ic", SplitEntity{{g.c / blocks.in, blocks.in}}},
                           {"tile_oc", SplitEntity{{g.k / blocks.out, blocks.out}}},
                           {"tile_ow", std::move(tile_ow)},
                           {"unroll_kw", OtherOptionEntity{false}}});
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }
};

// The operator: ONNX Conv nodes whose group is neither 1 (conv2d) nor C = K (depthwise_conv2d).
class GroupConv2dOperator final : public conv::ConvOperator {
 public:
  std::string_view name() const override { return "group_conv2d"; }

  Result<std::optional<Workload>> workload_of(const NodeView& node) const override {
    KILN_ASSIGN_OR_RETURN(conv::ConvNode conv, conv::read_conv_node(node));
    if (conv.groups == 1 || (conv.groups == conv.c && conv.k == conv.c)) {
      return std::optional<Workload>();
    }
    if (conv.groups < 1 || conv.c % conv.groups != 0 || conv.k % conv.groups != 0) {
      return node.not_expressible("group=" + std::to_string(conv.groups) + " must divide C=" +
                                  std::to_string(conv.c) + " and K=" + std::to_string(conv.k));
    }
    Workload out = std::move(conv.workload);
    out.op = "group_conv2d";
    out.params["K"] = conv.k;
    out.params["groups"] = conv.groups;
    return std::optional(out);
  }

  // conv's args, then groups (args[5]).
  Result<Workload> from_tvm_args(const nlohmann::json& args) const override {
    KILN_ASSIGN_OR_RETURN(Workload w, conv::ConvOperator::from_tvm_args(args));
    if (args.size() < 6 || !args[5].is_number_integer()) {
      return InvalidArgument("groups (args[5]) is not an integer");
    }
    w.params["groups"] = args[5].get<int64_t>();
    return w;
  }

 protected:
  bool has_k() const override { return true; }
};

}  // namespace

const Operator& group_conv2d_operator() {
  static const GroupConv2dOperator kOperator;
  return kOperator;
}

const Template& group_conv2d_template() {
  static const GroupConv2dTemplate kTemplate;
  return kTemplate;
}

}  // namespace kiln::ops
