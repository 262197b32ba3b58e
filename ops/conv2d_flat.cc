// conv2d_NCHWc_flat.x86: a 1x1 convolution without padding as a matrix product over its output
// pixels, taken in tiles of any count of consecutive pixels (rows of the output flattened).
//
// conv2d_NCHWc.x86 tiles an output row: its register tile is tile_ow columns (a divisor or power
// of two of the width, or a tail tile past it) times one or two rows. On a 7x7 output that leaves
// 4 columns (and a tail of 3 computed on padding) or 7 (14 accumulators of 2 vectors, which with
// the two weight vectors and a broadcast spill on 16 AVX2 registers); 6 pixels of 2 vectors, the
// tile that keeps two FMA units busy there, is not in its space. Measured on Zen 4 at AVX2 (960 ->
// 320 channels): 68-83 GFLOPS with conv2d_NCHWc.x86's default on 7x7, 101-109 with 6 columns on
// a 7x6 output.
//
// Workload: conv2d's (conv2d_NCHWc.x86's keys and normalization, groups=1) with a 1x1 kernel and
// no padding (any stride), whose output has more than one pixel.
//
// Knobs (kiln's own space, not a TVM task): tile_ic = split(C) and tile_oc = split(K) as
// conv2d_NCHWc.x86's (so blocks chain with it), then tile_px = the pixels of one register tile,
// 1 to min(P*Q, kMaxRaggedRows): the P*Q pixels go in ceil(P*Q / tile_px) tiles as even as they go
// (EvenRowTiles: tiles of tile_px pixels when it divides P*Q, else of two consecutive counts).
//
// Program: the weights packed as conv2d_NCHWc.x86 packs them (untimed). A parallel loop over
// (batch, output chunk, pixel tile); a tile of pixels [p0, p0 + count) accumulates
// CC[pixel][oc_bn] over input chunks (serial) and their lanes (unrolled), reading pixel p at input
// row (p / Q) * stride_h, column (p % Q) * stride_w (ops/packed_matmul.h). Data in the
// config's input block is read in place; other data (NCHW, or another block) is first packed to
// it. A packed output (NCHW{oc_bn}c) is written straight from the tile; an NCHW one through a
// copy of the tile on the stack.
//
// Measured as conv2d_NCHWc.x86 is (ops/measured_layout.h): data in NCHW{tile_ic}c, output packed.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ops/conv2d_direct.h"
#include "ops/conv_common.h"
#include "ops/default_config.h"
#include "ops/packed_matmul.h"
#include "ops/registry.h"

namespace kiln::ops {

namespace {

using ir::Buffer;
using ir::BufferScope;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

class Conv2dFlatTemplate final : public conv::Conv2dVariant {
 public:
  std::string_view name() const override { return "conv2d_NCHWc_flat.x86"; }

  Result<Workload> normalize(const Workload& w) const override {
    KILN_ASSIGN_OR_RETURN(Workload direct, normalize_as_direct(w));
    const conv::Geometry g = conv::geometry(direct);
    if (!conv::is_1x1(g) || g.pad_h != 0 || g.pad_w != 0) {
      return refuse(w, "only a 1x1 kernel without padding reads its pixels as matrix rows");
    }
    if (g.p * g.q == 1) return refuse(w, "a 1x1 output has one pixel: no pixel tile to choose");
    return direct;
  }

  ConfigSpace space(const Workload& w) const override {
    const conv::Geometry g = conv::geometry(w);
    ConfigSpace space;
    space.define_split("tile_ic", g.c);
    space.define_split("tile_oc", g.k);
    std::vector<nlohmann::json> pixels;
    for (int64_t n = 1; n <= std::min(g.p * g.q, kMaxRaggedRows); ++n) pixels.push_back(n);
    space.define_knob("tile_px", std::move(pixels));
    return space;
  }

  // conv2d_NCHWc.x86's fallback blocks and as many pixels as its fallback tile has.
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    const conv::Geometry g = conv::geometry(w);
    const ConfigEntity direct =
        conv2d_nchwc_template().fallback(w, conv2d_nchwc_template().space(w), target);
    const int64_t pixels =
        direct.split("tile_ow").size.back() * direct.other("tile_oh").val.get<int64_t>();
    return make(space, g, conv::fallback_blocks(g, target),
                std::clamp<int64_t>(pixels, 1, std::min(g.p * g.q, kMaxRaggedRows)));
  }

  // conv2d_NCHWc.x86's default blocks (chosen by channel count, so that neighbours chain) and
  // the pixel count whose tile models best (default_ragged_rows).
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    const conv::Geometry g = conv::geometry(w);
    const ActivationBlocks blocks = direct_default(w, target).blocks;
    return make(space, g, blocks, pixel_tile(g, blocks, target).rows);
  }

  // Where conv2d_NCHWc.x86's default tile models worse, or as well with no FMA chains beyond
  // what the FMA latency needs while this one has more (7x7 outputs on AVX2: 4 columns of 2
  // vectors, 8 chains, against 6 pixels, 12).
  bool preferred_untuned(const Workload& w, const TargetInfo& target) const override {
    const conv::Geometry g = conv::geometry(w);
    const conv::DefaultTile direct = direct_default(w, target);
    const DefaultMatmulTile flat = pixel_tile(g, direct.blocks, target);
    const int64_t chains = int64_t{std::max(1, target.fma_latency)} * std::max(1, target.fma_units);
    const int64_t direct_chains =
        direct.reg_n * direct.oh_factor * vectors_of(direct.blocks.out, target);
    if (flat.efficiency > direct.efficiency + 1e-9) return true;
    return flat.efficiency > direct.efficiency - 1e-9 && direct_chains <= chains &&
           flat.accumulators > chains;
  }

  std::optional<ActivationBlocks> activation_blocks(const Workload& w,
                                                    const ConfigEntity& config) const override {
    return conv::nchwc_blocks(conv::geometry(w), config);
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    const conv::Geometry g = conv::geometry(w);
    KILN_ASSIGN_OR_RETURN(ActivationBlocks blocks, conv::channel_blocks(g, config));
    KILN_ASSIGN_OR_RETURN(int64_t px, pixel_count(config, g));
    const int64_t ic_bn = blocks.in, oc_bn = blocks.out;
    const EvenRowTiles split = EvenRowTiles::of(g.p * g.q, px);
    const int64_t oc_chunks = g.k / oc_bn;

    KILN_ASSIGN_OR_RETURN(Buffer data, conv::data_buffer(g, layout));
    Buffer weight("weight", {g.k, g.c, 1, 1}, BufferScope::kArgument);
    Buffer bias("bias", {g.k}, BufferScope::kArgument);
    Buffer output = conv::output_buffer(g, oc_bn, layout);
    const conv::DirectConv direct =
        conv::conv2d_direct(g, ic_bn, conv::Conv2dTile{conv::Tiling{oc_bn, 1, 1}, false});
    Buffer kernel_vec("kernel_vec", direct.kernel_vec_shape, BufferScope::kWorkspace);
    // Data in ic_bn blocks, or in blocks of several chunks of whole cache lines
    // (conv::reads_chunks_in_place), is read in place; in any other layout it is packed to
    // NCHW{ic_bn}c first (nothing to pad: pad 0, and every pixel a tile reads is inside the data).
    const bool in_place = conv::reads_chunks_in_place(layout.data_block, ic_bn, false);
    conv::TiledShape unpadded;
    unpadded.h_pad = g.h;
    unpadded.w_pad = g.w;
    Buffer data_vec = in_place ? data : conv::packed_data_buffer(g, unpadded, ic_bn);
    const conv::DataLoad load_data = conv::chunk_load(data_vec, ic_bn);

    Expr f = ir::var("n_occ_px");
    std::vector<Expr> fused = conv::unfuse(f, {g.n, oc_chunks, split.tiles});
    const Expr n = fused[0], occ = fused[1];
    // The pixels [p0, p0 + count) of output chunk occ.
    auto pixel_tile = [&](const Expr& p0, int64_t count) {
      auto row = [&](const Expr& y) { return (p0 + y) / Expr(g.q); };
      auto col = [&](const Expr& y) { return (p0 + y) % Expr(g.q); };
      PackedMatmulTile tile;
      tile.rows = count;
      tile.lanes = oc_bn;
      tile.k_outer = g.c / ic_bn;
      tile.k_inner = ic_bn;
      tile.row_block = count;
      tile.a = [&](const Expr& y, const Expr& chunk, const Expr& lane) {
        return load_data(n, chunk, row(y) * Expr(g.stride_h), col(y) * Expr(g.stride_w), lane);
      };
      tile.b = [&](const Expr& chunk, const Expr& lane, const Expr& x) {
        return kernel_vec.load({occ, chunk, 0, 0, lane, x});
      };
      auto biased = [&](const Expr& x, const Expr& value) {
        return value + bias.load({occ * Expr(oc_bn) + x});
      };
      if (layout.packed_output) {
        tile.write = [&](const Expr& y, const Expr& x, const Expr& value) {
          return ir::Store(output, {n, occ, row(y), col(y), x}, biased(x, value));
        };
        return packed_matmul_tile(tile, target);
      }
      // NCHW: the tile's outputs are oc_bn channels apart by P*Q floats; they go out through a
      // copy on the stack, one store per output.
      Buffer out_tile("out_tile", {count, oc_bn}, BufferScope::kLocal);
      tile.write = [&](const Expr& y, const Expr& x, const Expr& value) {
        return ir::Store(out_tile, {y, x}, biased(x, value));
      };
      Expr y = ir::var("py"), x = ir::var("pc");
      Stmt copy = ir::LoopNest(
          {{x, oc_bn}, {y, count}},
          ir::Store(output, {n, occ * Expr(oc_bn) + x, row(y), col(y)}, out_tile.load({y, x})));
      return ir::Allocate(out_tile, ir::Seq({packed_matmul_tile(tile, target), copy}));
    };
    Stmt compute = ir::For(f, g.n * oc_chunks * split.tiles, LoopKind::kParallel,
                           split.body(fused[2], pixel_tile));

    ir::Program program;
    program.name = "conv2d_NCHWc_flat";
    program.buffers = {data, weight, bias, output};
    if (!in_place) program.buffers.push_back(data_vec);
    program.buffers.push_back(kernel_vec);
    program.num_inputs = 3;
    program.num_outputs = 1;
    program.stages = {
        {program.name + "_pack_weight", direct.pack_weight(weight, kernel_vec), false},
        {program.name + "_compute", compute, true}};
    if (!in_place) {
      program.stages.insert(
          program.stages.begin(),
          {program.name + "_pack_data", conv::pack_data(g, ic_bn, data, data_vec), false});
    }
    return program;
  }

 private:
  // conv2d_NCHWc.x86's default tile for `w` (REQUIRES: w normalized).
  static conv::DefaultTile direct_default(const Workload& w, const TargetInfo& target) {
    const conv::Geometry g = conv::geometry(w);
    const ConfigSpace space = conv2d_nchwc_template().space(w);
    auto [oh, ow] = conv::space_output_size(g);
    return conv::default_tile(g, false, ow, split_inner_factors(*space.find_knob("tile_ow")), oh,
                              conv::oh_factors(g), target);
  }

  // The pixel tile default_ragged_rows chooses for blocks of oc_bn lanes (consecutive pixels
  // read ic_bn * stride_w floats apart).
  static DefaultMatmulTile pixel_tile(const conv::Geometry& g, const ActivationBlocks& blocks,
                                      const TargetInfo& target) {
    return default_ragged_rows(g.p * g.q, blocks.out, blocks.in * g.stride_w * 4, target);
  }

  // tile_px, checked: a config from a record or a user is not trusted.
  Result<int64_t> pixel_count(const ConfigEntity& config, const conv::Geometry& g) const {
    KILN_ASSIGN_OR_RETURN(nlohmann::json px, option(config, "tile_px"));
    const int64_t most = std::min(g.p * g.q, kMaxRaggedRows);
    if (!px.is_number_integer() || px.get<int64_t>() < 1 || px.get<int64_t>() > most) {
      return InstantiationError(std::string(name()) + ": tile_px = " + px.dump() +
                                " is not an integer in [1, " + std::to_string(most) + "]");
    }
    return px.get<int64_t>();
  }

  static ConfigEntity make(const ConfigSpace& space, const conv::Geometry& g,
                           const ActivationBlocks& blocks, int64_t pixels) {
    Result<ConfigEntity> config =
        space.make_config({{"tile_ic", SplitEntity{{g.c / blocks.in, blocks.in}}},
                           {"tile_oc", SplitEntity{{g.k / blocks.out, blocks.out}}},
                           {"tile_px", OtherOptionEntity{pixels}}});
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }
};

}  // namespace

const Template& conv2d_flat_template() {
  static const Conv2dFlatTemplate kTemplate;
  return kTemplate;
}

}  // namespace kiln::ops
