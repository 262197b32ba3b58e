// conv2d_NCHWc_ragged.x86: kiln's direct convolution with output-channel blocks of whole vectors
// that need not divide K (1000, 1001, 40 ... channels, where TVM's blocks, which must divide K,
// leave vector lanes empty: 1000 channels take blocks of 8, 10 or 40 lanes on AVX-512).
//
// Workload: conv2d's (conv2d_NCHWc.x86's keys and normalization, groups=1), where K is more than
// one widest vector (kWidestSimdLanes) and not a multiple of it; elsewhere TVM's blocks fill the
// vectors (or a ragged block could not fill them better), and model tuning adds no task.
//
// Knobs: tile_ic = split(C) as TVM's; oc_bn = one of kRaggedBlocks (1 to 4 whole vectors of 4,
// 8 or 16 lanes, at most K rounded up to 4); then TVM's tile knobs (conv2d_direct.h). The space
// is kiln's own (not a TVM task), so its indices map to no TVM log.
//
// Program: conv2d_NCHWc.x86's (conv2d_direct.h, conv_common.h) over ceil(K / oc_bn) blocks: the
// weights and bias are packed with zeros past K (untimed, compile-time in a model), the padding
// lanes are computed and never stored. A block that divides K gives conv2d_NCHWc.x86's program
// and chains packed activations as it does; a ragged block reads NCHW{ic_bn}c data as it is and
// writes an NCHW output (activation_blocks' out = 0), which the layout planner counts.
//
// Untuned, compile uses it where its default config's modelled throughput beats conv2d_NCHWc's
// default by kPreferredMargin (preferred_untuned), i.e. where the dividing blocks of the default
// (ops::channel_block: at most two vectors, the fewest idle lanes) leave a third of the lanes or
// more empty: a prime count on any target; not 1000 on AVX-512 (25-lane blocks, 78 % used),
// 1001 (13 lanes of 16, 7 of 8), 72 (24 of 32) or 24.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ops/conv2d_direct.h"
#include "ops/conv_common.h"
#include "ops/default_config.h"
#include "ops/registry.h"

namespace kiln::ops {

namespace {

constexpr int64_t kRaggedBlocks[] = {4, 8, 12, 16, 24, 32, 48, 64};
// The modelled speedup over conv2d_NCHWc's default that an untuned ragged block must bring: its
// NCHW output costs the next conv its packed input (a layout transform), which a small gain does
// not repay (MnasNet's 72-channel 1x1 convs on AVX-512, 16-lane ragged blocks for TVM's 12: 1.2x
// modelled, the untuned model 7.85 -> 8.24 ms).
constexpr double kPreferredMargin = 1.5;

class Conv2dRaggedTemplate final : public conv::Conv2dVariant {
 public:
  std::string_view name() const override { return "conv2d_NCHWc_ragged.x86"; }

  Result<Workload> normalize(const Workload& w) const override {
    KILN_ASSIGN_OR_RETURN(Workload direct, normalize_as_direct(w));
    const int64_t k = conv::geometry(direct).k;
    if (k <= kWidestSimdLanes || k % kWidestSimdLanes == 0) {
      return refuse(w, "K=" + std::to_string(k) +
                           " is not over and off a multiple of the widest vector's " +
                           std::to_string(kWidestSimdLanes) +
                           " lanes: conv2d_NCHWc.x86's blocks serve it as well");
    }
    return direct;
  }

  ConfigSpace space(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    ConfigSpace space;
    space.define_split("tile_ic", g.c);
    space.define_knob("oc_bn", block_values(g));
    conv::define_tile_knobs(g, &space);
    return space;
  }

  // conv2d_NCHWc.x86's fallback blocks in (ic_bn) and the smallest block of whole SIMD vectors
  // out, with its fallback's tile knobs.
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    ConfigEntity direct =
        conv2d_nchwc_template().fallback(w, conv2d_nchwc_template().space(w), target);
    int64_t ic_bn = conv::fallback_blocks(g, target).in;
    return make(space, g, ic_bn, vector_block(g, 1, target),
                {{"tile_ow", direct.split("tile_ow")},
                 {conv::is_1x1(g) ? "tile_oh" : "unroll_kw",
                  direct.other(conv::is_1x1(g) ? "tile_oh" : "unroll_kw")}});
  }

  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    conv::DefaultTile tile = default_tile(g, space, target);
    return make(space, g, tile.blocks.in, tile.blocks.out, conv::default_tile_knobs(g, tile));
  }

  bool preferred_untuned(const Workload& w, const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    ConfigSpace space = this->space(w);
    auto [oh, ow] = conv::space_output_size(g);
    conv::DefaultTile direct =
        conv::default_tile(g, false, ow, split_inner_factors(*space.find_knob("tile_ow")), oh,
                           conv::oh_factors(g), target);
    return default_tile(g, space, target).efficiency > kPreferredMargin * direct.efficiency;
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    conv::Geometry g = conv::geometry(w);
    KILN_ASSIGN_OR_RETURN(int64_t ic_bn, conv::split_inner(config, "tile_ic", g.c));
    KILN_ASSIGN_OR_RETURN(int64_t oc_bn, block(config));
    KILN_ASSIGN_OR_RETURN(conv::Conv2dTile tile, conv::read_tile_knobs(g, config, oc_bn));
    return conv::direct_conv_program(g, conv::conv2d_direct(g, ic_bn, tile), target, layout);
  }

  // Out is 0 (an NCHW output) for a ragged block.
  std::optional<ActivationBlocks> activation_blocks(const Workload& w,
                                                    const ConfigEntity& config) const override {
    conv::Geometry g = conv::geometry(w);
    Result<int64_t> ic_bn = conv::split_inner(config, "tile_ic", g.c);
    Result<int64_t> oc_bn = block(config);
    if (!ic_bn.ok() || !oc_bn.ok()) return std::nullopt;
    return ActivationBlocks{*ic_bn, g.k % *oc_bn == 0 ? *oc_bn : 0};
  }

 private:
  // kRaggedBlocks up to K rounded up to 4 lanes (larger blocks would only add padding).
  static std::vector<nlohmann::json> block_values(const conv::Geometry& g) {
    std::vector<nlohmann::json> out;
    for (int64_t b : kRaggedBlocks) {
      if (b == kRaggedBlocks[0] || b <= (g.k + 3) / 4 * 4) out.push_back(b);
    }
    return out;
  }

  static Result<int64_t> block(const ConfigEntity& config) {
    KILN_ASSIGN_OR_RETURN(nlohmann::json b, option(config, "oc_bn"));
    if (!b.is_number_integer() || std::find(std::begin(kRaggedBlocks), std::end(kRaggedBlocks),
                                            b.get<int64_t>()) == std::end(kRaggedBlocks)) {
      return InstantiationError("oc_bn = " + b.dump() +
                                " is not one of 4, 8, 12, 16, 24, 32, "
                                "48, 64");
    }
    return b.get<int64_t>();
  }

  // The space's block of `vectors` whole vectors of the target; else (a width the space lacks,
  // or K rounded up is less) its nearest block above, or its largest.
  static int64_t vector_block(const conv::Geometry& g, int64_t vectors, const TargetInfo& target) {
    const int64_t want = vectors * std::max(1, target.simd_lanes);
    std::vector<nlohmann::json> values = block_values(g);
    for (const nlohmann::json& b : values) {
      if (b.get<int64_t>() >= want) return b.get<int64_t>();
    }
    return values.back().get<int64_t>();
  }

  // conv2d_NCHWc.x86's default input block, and the output block of 1 to kDefaultBlockVectors
  // whole vectors (one where a block's weights would exceed L2) whose register tile models best.
  static conv::DefaultTile default_tile(const conv::Geometry& g, const ConfigSpace& space,
                                        const TargetInfo& target) {
    auto [oh, ow] = conv::space_output_size(g);
    const std::vector<int64_t> reg_factors = split_inner_factors(*space.find_knob("tile_ow"));
    const int64_t ic_bn = channel_block(g.c, conv::kDefaultBlockVectors, target);
    conv::DefaultTile best;
    best.efficiency = -1;
    for (int64_t v = 1; v <= conv::kDefaultBlockVectors; ++v) {
      const int64_t oc_bn = vector_block(g, v, target);
      // More vectors only where the space has them and a block's weights fit the L2 cache.
      if (v > 1 && (oc_bn != v * target.simd_lanes ||
                    conv::block_weight_bytes(g, false, oc_bn) > target.l2_bytes)) {
        break;
      }
      conv::DefaultTile tile = conv::register_tile(g, false, {ic_bn, oc_bn}, ow, reg_factors, oh,
                                                   conv::oh_factors(g), target);
      if (tile.efficiency > best.efficiency + 1e-9) best = tile;
    }
    return best;
  }

  static ConfigEntity make(const ConfigSpace& space, const conv::Geometry& g, int64_t ic_bn,
                           int64_t oc_bn, std::vector<std::pair<std::string, Entity>> tile_knobs) {
    std::vector<std::pair<std::string, Entity>> entities = {
        {"tile_ic", SplitEntity{{g.c / ic_bn, ic_bn}}}, {"oc_bn", OtherOptionEntity{oc_bn}}};
    for (auto& knob : tile_knobs) entities.push_back(std::move(knob));
    Result<ConfigEntity> config = space.make_config(std::move(entities));
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }
};

}  // namespace

const Template& conv2d_ragged_template() {
  static const Conv2dRaggedTemplate kTemplate;
  return kTemplate;
}

}  // namespace kiln::ops
