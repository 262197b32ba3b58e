// depthwise_conv2d_NCHWc.x86: TVM's x86 depthwise convolution (topi/x86/depthwise_conv2d.py) with
// channel multiplier 1, for NCHW data, a [C, 1, R, S] weight and an NCHW output with a bias.
//
// Workload: depthwise_conv2d:N=,C=,H=,W=,R=,S= with stride (1), pad (0), dilation (1), optionally
// stride_h/stride_w/pad_h/pad_w, and K (must equal C; dropped by normalize).
//
// Knobs (TVM's, in TVM's order): tile_ic = split(C), tile_oc = split(C), tile_ow = split(out
// width, policy "factors", inner <= 64), unroll_kw = [true, false].
//
// Program: pack data to a padded NCHW{ic_bn}c workspace and the weights to [C/oc_bn, R, S, oc_bn]
// (untimed), then the timed compute stage of conv_common.h with TVM's reduction order
// kh, kw (unrolled with unroll_kw), ow_block (unrolled), oc_block (vectorized). A tile whose
// accumulators would not fit the target's vector registers (tile_ow columns of oc_bn lanes)
// runs that order over groups of the block's vectors, one group after another
// (conv::depthwise_lane_block): the lanes share no operand, so this loads nothing twice, and
// each output sums its terms in the same order. When ic_bn is a
// multiple of oc_bn the lanes of a block read contiguous packed data; otherwise the block spans
// several input chunks and its data loads are gathers (TVM's schedule has the same access).
// When ic_bn is a multiple of oc_bn, data that arrives packed in block ic_bn (a compiled
// model's) is read in place, padding or not: only the tiles on the border pad a copy of their
// window (conv_common.h, TileInputs::kOwnLanes).
#include <utility>

#include "ops/conv_common.h"
#include "ops/default_config.h"
#include "ops/registry.h"

namespace kiln::ops {

namespace {

using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

constexpr int64_t kNoK = -1;  // default of the optional K key

class DepthwiseConv2dNchwcTemplate final : public Template {
 public:
  std::string_view name() const override { return "depthwise_conv2d_NCHWc.x86"; }
  std::string_view op() const override { return "depthwise_conv2d"; }

  Result<Workload> normalize(const Workload& w) const override {
    KILN_ASSIGN_OR_RETURN(Workload out, conv::normalize(w, name(),
                                                        {{"N", {}},
                                                         {"C", {}},
                                                         {"H", {}},
                                                         {"W", {}},
                                                         {"R", {}},
                                                         {"S", {}},
                                                         {"dilation", 1},
                                                         {"K", kNoK}}));
    int64_t k = out.at("K");
    if (k != kNoK && k != out.at("C")) {
      return InvalidArgument(std::string(name()) + " workload " + w.to_string() + ": K=" +
                             std::to_string(k) + " must equal C=" + std::to_string(out.at("C")) +
                             " (only channel multiplier 1 is supported)");
    }
    out.params.erase("K");
    return out;
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return {{"data", {g.n, g.c, g.h, g.w}}, {"weight", {g.c, 1, g.r, g.s}}, {"bias", {g.c}}};
  }

  std::vector<TensorSpec> outputs(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return {{"output", {g.n, g.c, g.p, g.q}}};
  }

  double flop(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return 2.0 * g.n * g.c * g.p * g.q * g.r * g.s;
  }

  ConfigSpace space(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    ConfigSpace space;
    space.define_split("tile_ic", g.c);
    space.define_split("tile_oc", g.c);
    SplitOptions ow_options;
    ow_options.filter = [](const SplitEntity& e) { return e.size.back() <= 64; };
    space.define_split("tile_ow", g.q, ow_options);
    space.define_knob("unroll_kw", {true, false});
    return space;
  }

  // TVM's _fallback_schedule (topi/x86/depthwise_conv2d.py).
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    ActivationBlocks blocks = conv::fallback_blocks(g, target);
    int64_t oc_bn = blocks.out, ic_bn = blocks.in;
    int64_t reg_n = largest_divisor_at_most(g.q, 31);
    Result<ConfigEntity> config = space.make_config({{"tile_ic", SplitEntity{{g.c / ic_bn, ic_bn}}},
                                                     {"tile_oc", SplitEntity{{g.c / oc_bn, oc_bn}}},
                                                     {"tile_ow", SplitEntity{{g.q / reg_n, reg_n}}},
                                                     {"unroll_kw", OtherOptionEntity{false}}});
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }

  // kiln's default (ops/default_config.h): the register tile for the target's registers, its
  // columns discounted for the windows its border tiles copy (conv::border_window_share). The
  // kernel's columns are unrolled (adjacent outputs' taps then share their data loads) where the
  // accumulators leave half the registers for the taps' operands and the tile is not a whole
  // row of a 5x5 or larger kernel. Measured on Zen 5 (AVX-512), one thread: MnasNet's
  // 120-channel 5x5 on 28x28 in tiles of 7 columns ran 1.9x faster unrolled, its 72-channel 3x3
  // 1.3x; unrolled, 28 accumulators of 480 channels on 14x14 ran 1.25x slower, and 1152 channels
  // of a 5x5 on 7x7 in whole rows 1.25x slower.
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    conv::DefaultTile tile = conv::default_tile(
        g, true, g.q, split_inner_factors(*space.find_knob("tile_ow")), 1, {1}, target);
    const int64_t bn = tile.blocks.out;
    const bool unroll =
        2 * tile.accumulators <= target.vector_registers && (g.r * g.s <= 9 || tile.reg_n < g.q);
    Result<ConfigEntity> config = space.make_config({{"tile_ic", SplitEntity{{g.c / bn, bn}}},
                                                     {"tile_oc", SplitEntity{{g.c / bn, bn}}},
                                                     {"tile_ow", two_way_split(g.q, tile.reg_n)},
                                                     {"unroll_kw", OtherOptionEntity{unroll}}});
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    conv::Geometry g = conv::geometry(w);
    KILN_ASSIGN_OR_RETURN(ActivationBlocks channels, conv::channel_blocks(g, config));
    const int64_t ic_bn = channels.in, oc_bn = channels.out;
    KILN_ASSIGN_OR_RETURN(int64_t reg_n, conv::split_inner(config, "tile_ow", 0));
    KILN_ASSIGN_OR_RETURN(nlohmann::json unroll, option(config, "unroll_kw"));
    if (!unroll.is_boolean()) {
      return InstantiationError("unroll_kw = " + unroll.dump() + " is not a boolean");
    }
    bool unroll_kw = unroll.get<bool>();
    conv::Tiling t{oc_bn, reg_n, 1};
    t.lane_block = conv::depthwise_lane_block(t, target);

    conv::DirectConv direct;
    direct.name = "depthwise_conv2d_NCHWc";
    direct.weight_shape = {g.c, 1, g.r, g.s};
    direct.kernel_vec_shape = {g.c / oc_bn, g.r, g.s, oc_bn};
    direct.ic_bn = ic_bn;
    direct.tiling = t;
    direct.pack_weight = [&](const ir::Buffer& weight, const ir::Buffer& kernel_vec) {
      return pack_weight(g, oc_bn, weight, kernel_vec);
    };
    if (ic_bn % oc_bn == 0) direct.tile_inputs = conv::TileInputs::kOwnLanes;
    direct.reduction = [&](const conv::Tile& tile, const conv::DataLoad& data,
                           const ir::Buffer& kernel_vec) {
      Expr kh = ir::var("kh"), kw = ir::var("kw");
      Stmt update = conv::accumulate(tile, [&](const Expr&, const Expr& j, const Expr& v) {
        // Input channel oc_chunk * oc_bn + v of the NCHW{ic_bn}c data.
        Expr chunk, lane;
        if (ic_bn % oc_bn == 0) {
          int64_t blocks = ic_bn / oc_bn;  // output blocks per input chunk
          chunk = tile.oc_chunk / Expr(blocks);
          lane = tile.oc_chunk % Expr(blocks) * Expr(oc_bn) + v;
        } else {
          Expr c = tile.oc_chunk * Expr(oc_bn) + v;
          chunk = c / Expr(ic_bn);
          lane = c % Expr(ic_bn);
        }
        Expr h = tile.oh0 * Expr(g.stride_h) + kh * Expr(g.dilation);
        Expr x = (tile.ow0 + j) * Expr(g.stride_w) + kw * Expr(g.dilation);
        return data(tile.n, chunk, h, x, lane) * kernel_vec.load({tile.oc_chunk, kh, kw, v});
      });
      return ir::LoopNest(
          {{kh, g.r}, {kw, g.s, unroll_kw ? LoopKind::kUnrolled : LoopKind::kSerial}}, update);
    };

    return conv::direct_conv_program(g, direct, target, layout);
  }

  std::optional<ActivationBlocks> activation_blocks(const Workload& w,
                                                    const ConfigEntity& config) const override {
    return conv::nchwc_blocks(conv::geometry(w), config);
  }

  void reference(const Workload& w, const std::vector<const float*>& inputs,
                 const std::vector<float*>& outputs) const override {
    conv::reference(conv::geometry(w), /*depthwise=*/true, inputs[0], inputs[1], inputs[2],
                    outputs[0]);
  }

  nlohmann::json tvm_args(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    return conv::tvm_args(g, {g.c, 1, g.r, g.s});
  }

 private:
  // kernel_vec[occ, kh, kw, ocb] = weight[occ * oc_bn + ocb, 0, kh, kw]
  static Stmt pack_weight(const conv::Geometry& g, int64_t oc_bn, const ir::Buffer& weight,
                          const ir::Buffer& kernel_vec) {
    Expr occ = ir::var("occ"), kh = ir::var("kh"), kw = ir::var("kw");
    Stmt body = conv::vector_loop("ocb", oc_bn, [&](const Expr& ocb) {
      return ir::Store(kernel_vec, {occ, kh, kw, ocb},
                       weight.load({occ * Expr(oc_bn) + ocb, Expr(0), kh, kw}));
    });
    return ir::LoopNest({{occ, g.c / oc_bn, LoopKind::kParallel}, {kh, g.r}, {kw, g.s}}, body);
  }
};

// The operator: ONNX Conv nodes of group = C = K (> 1).
class DepthwiseConv2dOperator final : public conv::ConvOperator {
 public:
  std::string_view name() const override { return "depthwise_conv2d"; }

  Result<std::optional<Workload>> workload_of(const NodeView& node) const override {
    KILN_ASSIGN_OR_RETURN(conv::ConvNode conv, conv::read_conv_node(node));
    if (conv.groups == 1 || conv.groups != conv.c || conv.k != conv.c) {
      return std::optional<Workload>();  // conv2d's (which refuses other groups)
    }
    Workload out = std::move(conv.workload);
    out.op = "depthwise_conv2d";
    return std::optional(out);
  }

 protected:
  bool has_k() const override { return false; }
};

}  // namespace

const Operator& depthwise_conv2d_operator() {
  static const DepthwiseConv2dOperator kOperator;
  return kOperator;
}

const Template& depthwise_conv2d_nchwc_template() {
  static const DepthwiseConv2dNchwcTemplate kTemplate;
  return kTemplate;
}

}  // namespace kiln::ops
