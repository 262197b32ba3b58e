// conv2d_NCHWc_winograd.x86: kiln's Winograd convolution F(4x4, 3x3) for 3x3, stride-1,
// dilation-1, groups-1 convolutions, in the packed layouts of conv2d_NCHWc.x86 (TVM has Winograd
// templates for ARM and CUDA only). An extra template (Template::extra): it is tuned next to the
// direct template and used where its measured time is lower; untuned, where it models faster
// (preferred_untuned).
//
// Workload: conv2d's (ops/conv2d.cc), normalized identically, so that both templates' tasks of a
// layer share one workload string.
//
// With m = 4, alpha = m + 2 = 6 and the output cut into T = N * ceil(P/4) * ceil(Q/4) tiles of
// 4x4 (Lavin & Gray, interpolation points 0, +-1, +-2, inf):
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A        per tile, per (output, input) channel pair
// The program:
//   pack_data          (untimed)  data -> zero-padded NCHW{ic_bn}c, 4 * tiles + 2 rows/columns
//   transform_weight   (untimed)  U[e][oc_chunk][c][oc_bn] = (G g G^T)[e]; reads only the weight,
//                                 so a compiled model computes it once (a constant), and tuning
//                                 takes it pre-transformed as AutoTVM takes the kernel pre-packed
//   transform_data     (timed)    V[e][t][c] = (B^T d B)[e], vectorized over ic_bn lanes
//   batched_gemm       (timed)    M[e][oc_chunk][t][oc_bn] = sum_c V[e][t][c] U[e][oc_chunk][c][.]
//                                 for the 36 positions e: the packed matmul register tile
//                                 (ops/packed_matmul.h), tile_t tiles by oc_bn lanes
//   transform_output   (timed)    output = A^T M A + bias, partial tiles cut at P and Q; the
//                                 output is NCHW, or NCHW{oc_bn}c under ActivationLayout
//
// Knobs: tile_ic = split(C) (the data block), tile_oc = split(K) (the GEMM lanes and the output
// block), tile_t = split(T, "verbose", inner <= 32: the GEMM's rows; a tail is padding), tile_k =
// split(C, inner <= 16: reduction steps unrolled per serial step).
#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <utility>

#include "ops/conv2d_direct.h"
#include "ops/conv_common.h"
#include "ops/default_config.h"
#include "ops/limits.h"
#include "ops/packed_matmul.h"
#include "ops/registry.h"

namespace kiln::ops {

namespace {

using ir::Buffer;
using ir::BufferScope;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

constexpr int64_t kTileOut = 4;                  // m: outputs per tile side
constexpr int64_t kAlpha = kTileOut + 2;         // transform size per side
constexpr int64_t kPositions = kAlpha * kAlpha;  // e: positions of the batched GEMM
constexpr int64_t kMaxGemmRows = 32;             // tile_t's largest inner factor
constexpr int64_t kMaxUnrolledK = 16;            // tile_k's largest inner factor
// The untuned choice's model (preferred_untuned): channels below which the direct convolution is
// kept, and the bytes per cycle one core streams weights from memory (about 40 GB/s at 4 GHz).
constexpr int64_t kMinUntunedChannels = 16;
constexpr double kStreamBytesPerCycle = 10.0;

// F(4, 3)'s matrices (Lavin & Gray 2016).
constexpr std::array<std::array<double, kAlpha>, kAlpha> kBT = {{{4, 0, -5, 0, 1, 0},
                                                                 {0, -4, -4, 1, 1, 0},
                                                                 {0, 4, -4, -1, 1, 0},
                                                                 {0, -2, -1, 2, 1, 0},
                                                                 {0, 2, -1, -2, 1, 0},
                                                                 {0, 4, 0, -5, 0, 1}}};
constexpr std::array<std::array<double, 3>, kAlpha> kG = {{{1.0 / 4, 0, 0},
                                                           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                                           {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                                           {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                                           {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                                           {0, 0, 1}}};
constexpr std::array<std::array<double, kAlpha>, kTileOut> kAT = {
    {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// sum_k coeff[k] * term(k) over the nonzero coefficients, with +-1 as an add or subtract.
Expr linear_combination(const std::vector<double>& coeff,
                        const std::function<Expr(int64_t)>& term) {
  Expr sum;
  for (size_t k = 0; k < coeff.size(); ++k) {
    double c = coeff[k];
    if (c == 0) continue;
    Expr t = term(static_cast<int64_t>(k));
    if (c != 1 && c != -1) t = t * ir::f32(c);
    if (!sum.defined()) {
      sum = c == -1 ? ir::f32(0) - t : t;
    } else {
      sum = c == -1 ? sum - t : sum + t;
    }
  }
  return sum.defined() ? sum : ir::f32(0);
}

template <size_t Cols>
std::vector<double> row_of(const std::array<double, Cols>& row) {
  return std::vector<double>(row.begin(), row.end());
}

// The tiling of a workload's output and the GEMM sizes a config implies.
struct WinogradShape {
  int64_t tiles_h = 0, tiles_w = 0;  // 4x4 tiles per column / row
  int64_t tiles = 0;                 // T = n * tiles_h * tiles_w
  int64_t t_bn = 1;                  // GEMM rows per register tile (tile_t[-1])
  int64_t t_chunks = 0, t_pad = 0;   // ceil(T / t_bn), t_chunks * t_bn
};

WinogradShape winograd_shape(const conv::Geometry& g, int64_t t_bn) {
  WinogradShape s;
  s.tiles_h = ceil_div(g.p, kTileOut);
  s.tiles_w = ceil_div(g.q, kTileOut);
  s.tiles = g.n * s.tiles_h * s.tiles_w;
  s.t_bn = t_bn;
  s.t_chunks = ceil_div(s.tiles, t_bn);
  s.t_pad = s.t_chunks * t_bn;
  return s;
}

int64_t tile_count(const conv::Geometry& g) { return winograd_shape(g, 1).tiles; }

// The direct convolution's FLOPs (conv::Conv2dVariant), so that GFLOPS compare with the direct
// template's (effective throughput; the Winograd program does about a quarter of the
// multiplications).
class Conv2dWinogradTemplate final : public conv::Conv2dVariant {
 public:
  std::string_view name() const override { return "conv2d_NCHWc_winograd.x86"; }

  // conv2d_NCHWc.x86's normalization (the same keys, defaults and canonical form, groups=1),
  // then the shapes F(4x4, 3x3) computes.
  Result<Workload> normalize(const Workload& w) const override {
    KILN_ASSIGN_OR_RETURN(Workload direct, normalize_as_direct(w));
    conv::Geometry g = conv::geometry(direct);
    if (g.r != 3 || g.s != 3) {
      return refuse(w, "only 3x3 kernels are supported (R=" + std::to_string(g.r) +
                           ", S=" + std::to_string(g.s) + ")");
    }
    if (g.stride_h != 1 || g.stride_w != 1) {
      return refuse(w, "only stride 1 is supported (stride " + std::to_string(g.stride_h) + "x" +
                           std::to_string(g.stride_w) + ")");
    }
    if (g.dilation != 1) {
      return refuse(w,
                    "only dilation=1 is supported (dilation=" + std::to_string(g.dilation) + ")");
    }
    return direct;
  }

  ConfigSpace space(const Workload& w) const override {
    conv::Geometry g = conv::geometry(w);
    ConfigSpace space;
    space.define_split("tile_ic", g.c);
    space.define_split("tile_oc", g.k);
    SplitOptions t_options;
    t_options.policy = "verbose";
    t_options.filter = [](const SplitEntity& e) { return e.size.back() <= kMaxGemmRows; };
    space.define_split("tile_t", tile_count(g), t_options);
    space.define_split("tile_k", g.c, factor_splits(2, [](const SplitEntity& e) {
                         return e.size.back() <= kMaxUnrolledK;
                       }));
    return space;
  }

  // Untuned, where Winograd models faster than the direct convolution: both at the target's FMA
  // peak, the batched GEMM's 36 T C K multiply-adds (T 4x4 tiles) against the direct's 9 P Q C K,
  // plus Winograd's transformed weights (36 C K floats, 4x the direct's 9) streamed from memory
  // once per run at kStreamBytesPerCycle; and at least kMinUntunedChannels input and output
  // channels, below which the transforms and the accumulators' init and store outweigh a short
  // reduction. Measured on Zen 5 (kiln measure, default configs, AVX-512 and AVX2 code): Winograd
  // 1.2-2.9x faster at 32-512 channels on 14x14 to 112x112 outputs and 128 -> 32 channels down to
  // 7x7, except 3 -> 64 channels at 224x224 (2.3 ms against 0.85 at AVX-512), 512 channels at 7x7
  // on AVX-512 (1.41 against 0.97; at AVX2 1.50 against 2.43, where the model picks Winograd) and
  // 512 channels at 14x14 on AVX-512 (4.75 against 4.52, modelled the other way round).
  bool preferred_untuned(const Workload& w, const TargetInfo& target) const override {
    const conv::Geometry g = conv::geometry(w);
    if (g.c < kMinUntunedChannels || g.k < kMinUntunedChannels) return false;
    const double flops_per_cycle =
        2.0 * std::max(1, target.simd_lanes) * std::max(1, target.fma_units);
    const double channels = static_cast<double>(g.c) * static_cast<double>(g.k);
    const double direct =
        2.0 * 9 * static_cast<double>(g.n * g.p * g.q) * channels / flops_per_cycle;
    const double gemm =
        2.0 * kPositions * static_cast<double>(tile_count(g)) * channels / flops_per_cycle;
    const double weights = 4.0 * kPositions * channels / kStreamBytesPerCycle;
    return gemm + weights < direct;
  }

  // The direct template's channel blocks (oc_bn the SIMD width, ic_bn <= oc_bn), 8 GEMM rows
  // (8 x oc_bn accumulators fit AVX-512's and AVX2's register files) and 4 unrolled reduction
  // steps, each the nearest value the space has.
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    conv::Geometry g = conv::geometry(w);
    // The largest tile_t inner factor <= 8 (the knob's entities are not sorted).
    const Knob* tile_t = space.find_knob("tile_t");
    SplitEntity rows{{tile_count(g), 1}};
    for (const Entity& e : tile_t->entities) {
      const SplitEntity& s = std::get<SplitEntity>(e);
      if (s.size.back() <= 8 && s.size.back() > rows.size.back()) rows = s;
    }
    return make(space, g, conv::fallback_blocks(g, target), rows);
  }

  // kiln's default: conv2d_NCHWc.x86's default blocks (chosen by channel count, so that an
  // untuned Winograd conv chains with its direct neighbours without a layout transform), the GEMM
  // rows among tile_t's whose register tile of oc_bn lanes models best (ops/default_config.h: it
  // fits the registers, FMA chains enough for the latency, the last row tile's padding counted as
  // waste), and the fallback's unrolled reduction steps.
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    const conv::Geometry g = conv::geometry(w);
    const Template& direct = conv2d_nchwc_template();
    const std::optional<ActivationBlocks> blocks =
        conv::nchwc_blocks(g, direct.default_config(w, direct.space(w), target));
    if (!blocks) return fallback(w, space, target);
    const int64_t tiles = tile_count(g);
    BestTile chooser(target);
    SplitEntity rows{{tiles, 1}};
    for (const Entity& e : space.find_knob("tile_t")->entities) {
      const SplitEntity& split = std::get<SplitEntity>(e);
      const int64_t r = split.size.back();
      RegisterTile tile = matmul_step(r, blocks->out, target);
      tile.useful *= static_cast<double>(tiles) / static_cast<double>(winograd_shape(g, r).t_pad);
      if (chooser.offer(tile)) rows = split;
    }
    return make(space, g, *blocks, rows);
  }

  std::optional<ActivationBlocks> activation_blocks(const Workload& w,
                                                    const ConfigEntity& config) const override {
    return conv::nchwc_blocks(conv::geometry(w), config);
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    conv::Geometry g = conv::geometry(w);
    KILN_ASSIGN_OR_RETURN(ActivationBlocks channels, conv::channel_blocks(g, config));
    const int64_t ic_bn = channels.in, oc_bn = channels.out;
    KILN_ASSIGN_OR_RETURN(int64_t t_bn, conv::split_inner(config, "tile_t", 0));
    KILN_ASSIGN_OR_RETURN(int64_t k_inner, conv::split_inner(config, "tile_k", g.c));
    WinogradShape ws = winograd_shape(g, t_bn);

    KILN_ASSIGN_OR_RETURN(Buffer data, conv::data_buffer(g, layout));
    Buffer weight("weight", {g.k, g.c, g.r, g.s}, BufferScope::kArgument);
    Buffer bias("bias", {g.k}, BufferScope::kArgument);
    Buffer output = conv::output_buffer(g, oc_bn, layout);
    // Named as in the direct template.
    Buffer data_vec("data_vec",
                    {g.n, g.c / ic_bn, ws.tiles_h * kTileOut + 2, ws.tiles_w * kTileOut + 2, ic_bn},
                    BufferScope::kWorkspace);
    Buffer u("kernel_winograd", {kPositions, g.k / oc_bn, g.c, oc_bn}, BufferScope::kWorkspace);
    Buffer v("data_winograd", {kPositions, ws.t_pad, g.c}, BufferScope::kWorkspace);
    Buffer m("product_winograd", {kPositions, g.k / oc_bn, ws.t_pad, oc_bn},
             BufferScope::kWorkspace);

    ir::Program program;
    program.name = "conv2d_NCHWc_winograd";
    program.buffers = {data, weight, bias, output, data_vec, u, v, m};
    program.num_inputs = 3;
    program.num_outputs = 1;
    program.stages = {
        {"conv2d_NCHWc_winograd_pack_data", conv::pack_data(g, ic_bn, data, data_vec), false},
        {"conv2d_NCHWc_winograd_transform_weight", transform_weight(g, oc_bn, weight, u), false},
        {"conv2d_NCHWc_winograd_transform_data", transform_data(g, ws, ic_bn, data_vec, v), true},
        {"conv2d_NCHWc_winograd_batched_gemm", batched_gemm(g, ws, oc_bn, k_inner, v, u, m, target),
         true},
        {"conv2d_NCHWc_winograd_transform_output",
         transform_output(g, ws, oc_bn, m, bias, output, layout.packed_output), true}};
    return program;
  }

 private:
  // The config of `blocks`, GEMM rows `rows` and up to 4 unrolled reduction steps (the largest
  // divisor of C at most 4).
  static ConfigEntity make(const ConfigSpace& space, const conv::Geometry& g,
                           const ActivationBlocks& blocks, const SplitEntity& rows) {
    const int64_t k_inner = largest_divisor_at_most(g.c, 4);
    Result<ConfigEntity> config =
        space.make_config({{"tile_ic", SplitEntity{{g.c / blocks.in, blocks.in}}},
                           {"tile_oc", SplitEntity{{g.k / blocks.out, blocks.out}}},
                           {"tile_t", rows},
                           {"tile_k", SplitEntity{{g.c / k_inner, k_inner}}}});
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }

  // u[i * 6 + j][occ][c][ocb] = sum_{a, b} G[i][a] g[k][c][a][b] G[j][b], k = occ * oc_bn + ocb.
  static Stmt transform_weight(const conv::Geometry& g, int64_t oc_bn, const Buffer& weight,
                               const Buffer& u) {
    Expr occ = ir::var("occ"), c = ir::var("c");
    std::vector<Stmt> positions;
    for (int64_t i = 0; i < kAlpha; ++i) {
      for (int64_t j = 0; j < kAlpha; ++j) {
        std::vector<double> coeff(9);
        for (int64_t a = 0; a < 3; ++a) {
          for (int64_t b = 0; b < 3; ++b) coeff[a * 3 + b] = kG[i][a] * kG[j][b];
        }
        positions.push_back(conv::vector_loop("ocb", oc_bn, [&](const Expr& ocb) {
          Expr k = occ * Expr(oc_bn) + ocb;
          return ir::Store(u, {Expr(i * kAlpha + j), occ, c, ocb},
                           linear_combination(coeff, [&](int64_t ab) {
                             return weight.load({k, c, Expr(ab / 3), Expr(ab % 3)});
                           }));
        }));
      }
    }
    return ir::LoopNest({{occ, g.k / oc_bn, LoopKind::kParallel}, {c, g.c}}, ir::Seq(positions));
  }

  // v[i * 6 + j][t][icc * ic_bn + icb] = (B^T d B)[i][j] for the 6x6 input tile d of tile t,
  // through tmp = B^T d; rows of v past the T tiles are zeroed (the GEMM reads them). tmp holds
  // the 36 positions of a run of channels on the stack: a block too large for the stack cap
  // (ic_bn 512 needs 72 KiB) is transformed in runs, the largest divisor of ic_bn that fits, so
  // that every config of the space builds.
  static Stmt transform_data(const conv::Geometry& g, const WinogradShape& ws, int64_t ic_bn,
                             const Buffer& data_vec, const Buffer& v) {
    Expr f = ir::var("n_icc_th"), tw = ir::var("tw"), icr = ir::var("icr");
    std::vector<Expr> idx = conv::unfuse(f, {g.n, g.c / ic_bn, ws.tiles_h});
    Expr n = idx[0], icc = idx[1], th = idx[2];
    Expr t = (n * Expr(ws.tiles_h) + th) * Expr(ws.tiles_w) + tw;
    int64_t run = ic_bn;
    while (kPositions * run > kMaxLocalFloats || ic_bn % run != 0) --run;
    const int64_t runs = ic_bn / run;
    Expr run0 = runs > 1 ? icr * Expr(run) : Expr(int64_t{0});
    Buffer tmp("winograd_tmp", {kPositions * run}, BufferScope::kLocal);
    std::vector<Stmt> body;
    for (int64_t i = 0; i < kAlpha; ++i) {  // tmp[i][j] = sum_k BT[i][k] d[k][j]
      for (int64_t j = 0; j < kAlpha; ++j) {
        body.push_back(conv::vector_loop("icb", run, [&](const Expr& icb) {
          return ir::StoreFlat(tmp, Expr((i * kAlpha + j) * run) + icb,
                               linear_combination(row_of(kBT[i]), [&](int64_t k) {
                                 return data_vec.load({n, icc, th * Expr(kTileOut) + Expr(k),
                                                       tw * Expr(kTileOut) + Expr(j), run0 + icb});
                               }));
        }));
      }
    }
    for (int64_t i = 0; i < kAlpha; ++i) {  // v[i][j] = sum_k tmp[i][k] BT[j][k]
      for (int64_t j = 0; j < kAlpha; ++j) {
        body.push_back(conv::vector_loop("icb", run, [&](const Expr& icb) {
          return ir::Store(v, {Expr(i * kAlpha + j), t, icc * Expr(ic_bn) + run0 + icb},
                           linear_combination(row_of(kBT[j]), [&](int64_t k) {
                             return tmp.load_flat(Expr((i * kAlpha + k) * run) + icb);
                           }));
        }));
      }
    }
    Stmt per_tile = ir::Allocate(tmp, ir::Seq(std::move(body)));
    if (runs > 1) per_tile = ir::For(icr, runs, LoopKind::kSerial, per_tile);
    Stmt tiles = ir::For(f, g.n * (g.c / ic_bn) * ws.tiles_h, LoopKind::kParallel,
                         ir::For(tw, ws.tiles_w, LoopKind::kSerial, per_tile));
    if (ws.t_pad == ws.tiles) return tiles;
    Expr e = ir::var("e"), row = ir::var("row");
    Stmt zero = ir::LoopNest({{e, kPositions, LoopKind::kParallel}, {row, ws.t_pad - ws.tiles}},
                             conv::vector_loop("c", g.c, [&](const Expr& c) {
                               return ir::Store(v, {e, Expr(ws.tiles) + row, c}, ir::f32(0));
                             }));
    return ir::Seq({tiles, zero});
  }

  // m[e][occ][t][ocb] = sum_c v[e][t][c] u[e][occ][c][ocb], in register tiles of t_bn tiles by
  // oc_bn lanes; parallel over (e, occ, tile chunk), the chunks innermost so that consecutive
  // tiles reuse one u[e][occ] panel.
  static Stmt batched_gemm(const conv::Geometry& g, const WinogradShape& ws, int64_t oc_bn,
                           int64_t k_inner, const Buffer& v, const Buffer& u, const Buffer& m,
                           const TargetInfo& target) {
    Expr f = ir::var("e_occ_tc");
    std::vector<Expr> idx = conv::unfuse(f, {kPositions, g.k / oc_bn, ws.t_chunks});
    Expr e = idx[0], occ = idx[1], t0 = idx[2] * Expr(ws.t_bn);
    PackedMatmulTile tile;
    tile.rows = ws.t_bn;
    tile.lanes = oc_bn;
    tile.k_outer = g.c / k_inner;
    tile.k_inner = k_inner;
    tile.row_block = ws.t_bn;
    auto k = [&](const Expr& ko, const Expr& ki) { return ko * Expr(k_inner) + ki; };
    tile.a = [&](const Expr& y, const Expr& ko, const Expr& ki) {
      return v.load({e, t0 + y, k(ko, ki)});
    };
    tile.b = [&](const Expr& ko, const Expr& ki, const Expr& x) {
      return u.load({e, occ, k(ko, ki), x});
    };
    tile.write = [&](const Expr& y, const Expr& x, const Expr& value) {
      return ir::Store(m, {e, occ, t0 + y, x}, value);
    };
    return ir::For(f, kPositions * (g.k / oc_bn) * ws.t_chunks, LoopKind::kParallel,
                   packed_matmul_tile(tile, target));
  }

  // output[4 th + i][4 tw + j] = (A^T M A)[i][j] + bias through tmp = A^T M, per tile and output
  // channel block; outputs past P or Q (a partial last tile) are not written.
  static Stmt transform_output(const conv::Geometry& g, const WinogradShape& ws, int64_t oc_bn,
                               const Buffer& m, const Buffer& bias, const Buffer& output,
                               bool packed_output) {
    Expr f = ir::var("n_occ_th"), tw = ir::var("tw");
    std::vector<Expr> idx = conv::unfuse(f, {g.n, g.k / oc_bn, ws.tiles_h});
    Expr n = idx[0], occ = idx[1], th = idx[2];
    Expr t = (n * Expr(ws.tiles_h) + th) * Expr(ws.tiles_w) + tw;
    Buffer tmp("winograd_tmp", {kTileOut * kAlpha * oc_bn}, BufferScope::kLocal);
    std::vector<Stmt> body;
    for (int64_t i = 0; i < kTileOut; ++i) {  // tmp[i][j] = sum_k AT[i][k] M[k][j]
      for (int64_t j = 0; j < kAlpha; ++j) {
        body.push_back(conv::vector_loop("ocb", oc_bn, [&](const Expr& ocb) {
          return ir::StoreFlat(tmp, Expr((i * kAlpha + j) * oc_bn) + ocb,
                               linear_combination(row_of(kAT[i]), [&](int64_t k) {
                                 return m.load({Expr(k * kAlpha + j), occ, t, ocb});
                               }));
        }));
      }
    }
    for (int64_t i = 0; i < kTileOut; ++i) {  // y[i][j] = sum_k tmp[i][k] AT[j][k] + bias
      for (int64_t j = 0; j < kTileOut; ++j) {
        Expr oh = th * Expr(kTileOut) + Expr(i), ow = tw * Expr(kTileOut) + Expr(j);
        Stmt store = conv::vector_loop("ocb", oc_bn, [&](const Expr& ocb) {
          Expr value = linear_combination(row_of(kAT[j]), [&](int64_t k) {
            return tmp.load_flat(Expr((i * kAlpha + k) * oc_bn) + ocb);
          });
          value = value + bias.load({occ * Expr(oc_bn) + ocb});
          // Per-dimension indices: a fused epilogue (compiler/) reads the channel from them.
          return packed_output ? ir::Store(output, {n, occ, oh, ow, ocb}, value)
                               : ir::Store(output, {n, occ * Expr(oc_bn) + ocb, oh, ow}, value);
        });
        Expr inside;
        if (g.p % kTileOut != 0 && i >= g.p % kTileOut) inside = oh < Expr(g.p);
        if (g.q % kTileOut != 0 && j >= g.q % kTileOut) {
          inside = inside.defined() ? (inside && ow < Expr(g.q)) : ow < Expr(g.q);
        }
        body.push_back(inside.defined() ? ir::If(inside, store) : store);
      }
    }
    return ir::For(
        f, g.n * (g.k / oc_bn) * ws.tiles_h, LoopKind::kParallel,
        ir::For(tw, ws.tiles_w, LoopKind::kSerial, ir::Allocate(tmp, ir::Seq(std::move(body)))));
  }
};

}  // namespace

const Template& conv2d_winograd_template() {
  static const Conv2dWinogradTemplate kTemplate;
  return kTemplate;
}

}  // namespace kiln::ops
