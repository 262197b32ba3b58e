#include "ops/conv_common.h"

#include <algorithm>
#include <numeric>
#include <variant>

#include "ops/default_config.h"
#include "ops/limits.h"

namespace kiln::ops::conv {

namespace {

using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

constexpr int64_t kUnset = -1;  // default of the per-dimension keys: "not given"

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t output_size(int64_t in, int64_t pad, int64_t kernel, int64_t dilation, int64_t stride) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

// Replaces `key`, `key_h`, `key_w` by the canonical form: `key` when both dimensions agree.
void canonicalize_pair(Workload* w, const std::string& key) {
  int64_t both = w->at(key), h = w->at(key + "_h"), v = w->at(key + "_w");
  if (h == kUnset) h = both;
  if (v == kUnset) v = both;
  for (const std::string& k : {key, key + "_h", key + "_w"}) w->params.erase(k);
  if (h == v) {
    w->params[key] = h;
  } else {
    w->params[key + "_h"] = h;
    w->params[key + "_w"] = v;
  }
}

int64_t pair_value(const Workload& w, const std::string& key, const char* suffix) {
  auto it = w.params.find(key);
  return it != w.params.end() ? it->second : w.at(key + suffix);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Workloads.

Result<Workload> normalize(const Workload& w, std::string_view template_name,
                           std::vector<ParamSpec> specs) {
  specs.push_back({"stride", 1, 1});
  specs.push_back({"pad", 0, 0});
  specs.push_back({"stride_h", kUnset, 1});
  specs.push_back({"stride_w", kUnset, 1});
  specs.push_back({"pad_h", kUnset, 0});
  specs.push_back({"pad_w", kUnset, 0});
  KILN_ASSIGN_OR_RETURN(Workload out, normalize_params(w, template_name, specs));
  canonicalize_pair(&out, "stride");
  canonicalize_pair(&out, "pad");

  Geometry g = geometry(out);
  std::string where = std::string(template_name) + " workload " + w.to_string() + ": ";
  auto too_small = [&](const char* dim, const char* in_key, int64_t in, const char* pad_key,
                       int64_t pad, const char* kernel_key, int64_t kernel) {
    return InvalidArgument(where + "the output " + dim + " would be < 1: kernel " + kernel_key +
                           "=" + std::to_string(kernel) +
                           " with dilation=" + std::to_string(g.dilation) + " spans " +
                           std::to_string(g.dilation * (kernel - 1) + 1) + ", more than " + in_key +
                           " + 2*" + pad_key + " = " + std::to_string(in + 2 * pad));
  };
  if (g.p < 1) return too_small("height", "H", g.h, "pad_h", g.pad_h, "R", g.r);
  if (g.q < 1) return too_small("width", "W", g.w, "pad_w", g.pad_w, "S", g.s);
  // Every tensor (and so every flat index) must stay far below int64 overflow.
  constexpr double kMaxElements = double(kMaxTensorElements);
  if (double(g.n) * g.c * (g.h + 2 * g.pad_h) * (g.w + 2 * g.pad_w) > kMaxElements ||
      double(g.k) * g.c * g.r * g.s > kMaxElements ||
      double(g.n) * g.k * g.p * g.q > kMaxElements) {
    return InvalidArgument(where + kShapeLimitsText);
  }
  return out;
}

Geometry geometry(const Workload& w) {
  Geometry g;
  g.n = w.at("N");
  g.c = w.at("C");
  g.h = w.at("H");
  g.w = w.at("W");
  g.k = w.params.count("K") ? w.at("K") : g.c;
  g.groups = w.params.count("groups") ? w.at("groups") : 1;
  g.r = w.at("R");
  g.s = w.at("S");
  g.stride_h = pair_value(w, "stride", "_h");
  g.stride_w = pair_value(w, "stride", "_w");
  g.pad_h = pair_value(w, "pad", "_h");
  g.pad_w = pair_value(w, "pad", "_w");
  g.dilation = w.at("dilation");
  g.p = output_size(g.h, g.pad_h, g.r, g.dilation, g.stride_h);
  g.q = output_size(g.w, g.pad_w, g.s, g.dilation, g.stride_w);
  return g;
}

nlohmann::json tvm_args(const Geometry& g, const std::vector<int64_t>& kernel_shape) {
  using nlohmann::json;
  return json::array({json::array({"TENSOR", {g.n, g.c, g.h, g.w}, "float32"}),
                      json::array({"TENSOR", kernel_shape, "float32"}),
                      {g.stride_h, g.stride_w},
                      {g.pad_h, g.pad_w, g.pad_h, g.pad_w},
                      {g.dilation, g.dilation},
                      "NCHW",
                      "NCHW",
                      "float32"});
}

void reference(const Geometry& g, bool depthwise, const float* data, const float* weight,
               const float* bias, float* out) {
  const int64_t weight_c = depthwise ? 1 : g.c / g.groups;
  const int64_t k_per_group = g.k / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t k = 0; k < g.k; ++k) {
      for (int64_t p = 0; p < g.p; ++p) {
        for (int64_t q = 0; q < g.q; ++q) {
          double acc = bias[k];
          for (int64_t ci = 0; ci < weight_c; ++ci) {
            int64_t c = depthwise ? k : k / k_per_group * weight_c + ci;
            for (int64_t r = 0; r < g.r; ++r) {
              int64_t h = p * g.stride_h - g.pad_h + r * g.dilation;
              if (h < 0 || h >= g.h) continue;
              for (int64_t s = 0; s < g.s; ++s) {
                int64_t w = q * g.stride_w - g.pad_w + s * g.dilation;
                if (w < 0 || w >= g.w) continue;
                acc += static_cast<double>(data[((n * g.c + c) * g.h + h) * g.w + w]) *
                       weight[((k * weight_c + ci) * g.r + r) * g.s + s];
              }
            }
          }
          out[((n * g.k + k) * g.p + p) * g.q + q] = static_cast<float>(acc);
        }
      }
    }
  }
}

std::vector<Expr> unfuse(const Expr& f, const std::vector<int64_t>& dims) {
  std::vector<Expr> out(dims.size());
  int64_t inner = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    bool outermost =
        i == 0 || std::all_of(dims.begin(), dims.begin() + i, [](int64_t d) { return d == 1; });
    Expr x = inner == 1 ? f : f / Expr(inner);
    out[i] = dims[i] == 1 ? Expr(0) : outermost ? x : x % Expr(dims[i]);
    inner *= dims[i];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Config access.

Result<int64_t> split_inner(const ConfigEntity& config, std::string_view knob,
                            int64_t must_divide) {
  std::string name(knob);
  const Entity* e = config.find(knob);
  const auto* split = e ? std::get_if<SplitEntity>(e) : nullptr;
  if (!split || split->size.empty()) {
    return InstantiationError("config has no split knob '" + name + "'");
  }
  int64_t inner = split->size.back();
  if (inner < 1 || (must_divide > 0 && must_divide % inner != 0)) {
    return InstantiationError(
        name + " = " + entity_repr(*e) + ": its inner factor " + std::to_string(inner) +
        " must be >= 1" +
        (must_divide > 0 ? " and divide " + std::to_string(must_divide) : std::string()));
  }
  return inner;
}

Result<ActivationBlocks> channel_blocks(const Geometry& g, const ConfigEntity& config) {
  KILN_ASSIGN_OR_RETURN(int64_t in, split_inner(config, "tile_ic", g.c));
  KILN_ASSIGN_OR_RETURN(int64_t out, split_inner(config, "tile_oc", g.k));
  return ActivationBlocks{in, out};
}

std::optional<ActivationBlocks> nchwc_blocks(const Geometry& g, const ConfigEntity& config) {
  Result<ActivationBlocks> blocks = channel_blocks(g, config);
  if (!blocks.ok()) return std::nullopt;
  return *blocks;
}

ActivationBlocks fallback_blocks(const Geometry& g, const TargetInfo& target) {
  int64_t oc_bn = largest_divisor_at_most(g.k, target.simd_lanes);
  return {largest_divisor_at_most(g.c, oc_bn), oc_bn};
}

DefaultTile default_tile(const Geometry& g, bool depthwise, int64_t ow,
                         const std::vector<int64_t>& reg_factors, int64_t oh,
                         const std::vector<int64_t>& oh_factors, const TargetInfo& target) {
  // Blocks by channel count alone, so that a conv reads its producer's output block as it is
  // (no conversion in its data packing, no unpack for a residual read): two vectors, one where
  // a block's weights would not fit the L2 cache (the next conv's input block then differs).
  int64_t oc_bn = channel_block(g.k, kDefaultBlockVectors, target);
  if (block_weight_bytes(g, depthwise, oc_bn) > target.l2_bytes) {
    oc_bn = channel_block(g.k, 1, target);
  }
  const int64_t ic_bn = depthwise ? oc_bn : channel_block(g.c, kDefaultBlockVectors, target);
  return register_tile(g, depthwise, {ic_bn, oc_bn}, ow, reg_factors, oh, oh_factors, target);
}

int64_t block_weight_bytes(const Geometry& g, bool depthwise, int64_t oc_bn) {
  return (depthwise ? 1 : g.c) * g.r * g.s * oc_bn * 4;
}

namespace {

// Tiles of `tile` outputs (stride apart in the input, `taps` taps `dilation` apart) over `outputs`
// outputs whose input window leaves [0, extent) after `pad`: the tiles that pad a window.
int64_t border_tiles(int64_t outputs, int64_t tile, int64_t stride, int64_t taps, int64_t dilation,
                     int64_t pad, int64_t extent) {
  const int64_t window = (tile - 1) * stride + (taps - 1) * dilation + 1;
  int64_t border = 0;
  for (int64_t start = 0; start < outputs; start += tile) {
    const int64_t first = start * stride - pad;
    border += first < 0 || first + window > extent ? 1 : 0;
  }
  return border;
}

}  // namespace

double border_window_share(const Geometry& g, int64_t reg_n, int64_t oh_factor) {
  const int64_t col_tiles = ceil_div(g.q, reg_n), row_tiles = ceil_div(g.p, oh_factor);
  const int64_t inner_cols =
      col_tiles - border_tiles(g.q, reg_n, g.stride_w, g.s, g.dilation, g.pad_w, g.w);
  const int64_t inner_rows =
      row_tiles - border_tiles(g.p, oh_factor, g.stride_h, g.r, g.dilation, g.pad_h, g.h);
  const double border = 1.0 - static_cast<double>(inner_cols * inner_rows) /
                                  static_cast<double>(col_tiles * row_tiles);
  // Per lane vector: the tile's FMAs at two a cycle against one cycle per window vector copied.
  const double fma_cycles = static_cast<double>(oh_factor * reg_n * g.r * g.s) / 2.0;
  const double copy_cycles =
      static_cast<double>(((oh_factor - 1) * g.stride_h + (g.r - 1) * g.dilation + 1) *
                          ((reg_n - 1) * g.stride_w + (g.s - 1) * g.dilation + 1));
  return fma_cycles / (fma_cycles + border * copy_cycles);
}

DefaultTile register_tile(const Geometry& g, bool depthwise, const ActivationBlocks& blocks,
                          int64_t ow, const std::vector<int64_t>& reg_factors, int64_t oh,
                          const std::vector<int64_t>& oh_factors, const TargetInfo& target) {
  const int64_t simd = std::max(1, target.simd_lanes);
  const int64_t oc_bn = blocks.out;
  const int64_t vecs = vectors_of(oc_bn, target);
  // The share of the computed lanes that are output channels: a block's lanes past a vector's
  // end, and a ragged block's padding past K.
  const double lane_use =
      g.k % oc_bn == 0
          ? static_cast<double>(oc_bn) / static_cast<double>(vecs * simd)
          : static_cast<double>(g.k) / static_cast<double>(ceil_div(g.k, oc_bn) * vecs * simd);
  DefaultTile best{blocks, 1, 1, 0.0};
  BestTile chooser(target);
  for (int64_t reg : reg_factors) {
    for (int64_t ohf : oh_factors) {
      // A depthwise tile accumulates its block's vectors in groups that fit (lane_block).
      const int64_t group =
          depthwise ? vectors_of(depthwise_lane_block(Tiling{oc_bn, reg, ohf}, target), target)
                    : vecs;
      RegisterTile tile;
      tile.accumulators = ohf * reg * group;
      tile.operands = group + 1;  // the weight vectors and one broadcast (or data) vector
      tile.fmas = tile.accumulators;
      tile.loads = depthwise ? tile.accumulators + group : vecs + ohf * reg;
      tile.useful = lane_use * static_cast<double>(ow) /
                    static_cast<double>(ceil_div(ow, reg) * reg) * static_cast<double>(oh) /
                    static_cast<double>(ceil_div(oh, ohf) * ohf);
      if (depthwise) tile.useful *= border_window_share(g, reg, ohf);
      if (chooser.offer(tile)) {
        best.reg_n = reg;
        best.oh_factor = ohf;
        best.accumulators = tile.accumulators;
        best.efficiency = tile_efficiency(tile, target);
      }
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Schedule.

TiledShape tiled_shape(const Geometry& g, const Tiling& t) {
  TiledShape ts;
  ts.ow_chunks = ceil_div(g.q, t.reg_n);
  ts.oh_chunks = ceil_div(g.p, t.oh_factor);
  ts.q_pad = ts.ow_chunks * t.reg_n;
  ts.p_pad = ts.oh_chunks * t.oh_factor;
  ts.h_pad = (ts.p_pad - 1) * g.stride_h + (g.r - 1) * g.dilation + 1;
  ts.w_pad = (ts.q_pad - 1) * g.stride_w + (g.s - 1) * g.dilation + 1;
  return ts;
}

ir::Buffer packed_data_buffer(const Geometry& g, const TiledShape& ts, int64_t ic_bn) {
  return ir::Buffer("data_vec", {g.n, g.c / ic_bn, ts.h_pad, ts.w_pad, ic_bn},
                    ir::BufferScope::kWorkspace);
}

Stmt pack_data(const Geometry& g, int64_t ic_bn, const ir::Buffer& data, const ir::Buffer& packed) {
  const std::vector<int64_t>& shape = packed->shape;  // n, ic_chunks, h_pad, w_pad, ic_bn
  Expr f = ir::var("n_icc_h"), x = ir::var("w");
  std::vector<Expr> nch = unfuse(f, {shape[0], shape[1], shape[2]});
  Expr h = nch[2] - Expr(g.pad_h), w = x - Expr(g.pad_w);
  Expr inside = h >= Expr(0) && h < Expr(g.h) && w >= Expr(0) && w < Expr(g.w);
  int64_t block = data->shape.size() == 5 ? data->shape[4] : 0;
  // From another block size the ic_bn lanes are copied in runs of gcd(block, ic_bn) channels:
  // a run starts at a multiple of the gcd, so it lies inside one block of the data and is
  // contiguous there (vector loads, not a gather of c / block, c % block per lane).
  int64_t run = block > 0 ? std::gcd(block, ic_bn) : ic_bn;
  auto load_data = [&](const Expr& run_start, const Expr& l) {
    if (block == ic_bn) return data.load({nch[0], nch[1], h, w, run_start + l});
    return load_channel(data, nch[0], nch[1] * Expr(ic_bn) + run_start, h, w, l);
  };
  auto copy = [&](bool zero) {
    auto copy_run = [&](const Expr& run_start) {
      return vector_loop("icb", zero ? ic_bn : run, [&](const Expr& l) {
        Expr value = zero ? ir::f32(0) : load_data(run_start, l);
        return ir::Store(packed, {nch[0], nch[1], nch[2], x, run_start + l}, value);
      });
    };
    if (zero || run == ic_bn) return copy_run(Expr(int64_t{0}));
    Expr u = ir::var("run");
    int64_t runs = ic_bn / run;
    return ir::For(u, runs, runs <= 8 ? LoopKind::kUnrolled : LoopKind::kSerial,
                   copy_run(u * Expr(run)));
  };
  return ir::For(f, shape[0] * shape[1] * shape[2], LoopKind::kParallel,
                 ir::For(x, shape[3], LoopKind::kSerial, ir::If(inside, copy(false), copy(true))));
}

Stmt vector_loop(const std::string& name, int64_t extent,
                 const std::function<Stmt(const Expr& v)>& body) {
  if (extent <= kMaxSimdLanes) {
    Expr v = ir::var(name);
    return ir::For(v, extent, LoopKind::kVectorized, body(v));
  }
  int64_t full = extent / kMaxSimdLanes, tail = extent % kMaxSimdLanes;
  Expr vo = ir::var(name + "_o"), vi = ir::var(name + "_i");
  Stmt main = ir::For(
      vo, full, LoopKind::kUnrolled,
      ir::For(vi, kMaxSimdLanes, LoopKind::kVectorized, body(vo * Expr(kMaxSimdLanes) + vi)));
  if (tail == 0) return main;
  Expr vt = ir::var(name + "_t");
  return ir::Seq(
      {main, ir::For(vt, tail, LoopKind::kVectorized, body(Expr(full * kMaxSimdLanes) + vt))});
}

namespace {

// The tiling compute() runs: `t`, or the sub-tile of it whose accumulators fit the stack, of at
// most t.lane_block lanes.
Tiling fitted_tiling(const Tiling& t) {
  std::vector<int64_t> sub = fit_tile({t.oh_factor, t.reg_n, t.oc_bn}, kMaxLocalFloats);
  Tiling st{sub[2], sub[1], sub[0]};
  if (t.lane_block > 0 && t.lane_block < st.oc_bn && st.oc_bn % t.lane_block == 0) {
    st.oc_bn = t.lane_block;
  }
  return st;
}

// for ohi, j (unrolled): vector_loop v: body(acc index, ohi, j, v)
Stmt tile_loop(const Tiling& t, const std::function<Stmt(const Expr& index, const Expr& ohi,
                                                         const Expr& j, const Expr& v)>& body) {
  Expr ohi = ir::var("ohi"), j = ir::var("j");
  Stmt inner = vector_loop("v", t.oc_bn, [&](const Expr& v) {
    return body((ohi * Expr(t.reg_n) + j) * Expr(t.oc_bn) + v, ohi, j, v);
  });
  return ir::For(ohi, t.oh_factor, LoopKind::kUnrolled,
                 ir::For(j, t.reg_n, LoopKind::kUnrolled, inner));
}

}  // namespace

Stmt accumulate(const Tile& tile, const TermFn& term) {
  return tile_loop(tile.tiling, [&](const Expr& index, const Expr& ohi, const Expr& j,
                                    const Expr& v) {
    return ir::StoreFlat(tile.acc, index, tile.acc.load_flat(index) + term(ohi, j, tile.lane0 + v));
  });
}

int64_t depthwise_lane_block(const Tiling& t, const TargetInfo& target) {
  const int64_t simd = std::max(1, target.simd_lanes);
  if (t.oc_bn % simd != 0) return t.oc_bn;
  const int64_t vecs = t.oc_bn / simd, outputs = t.oh_factor * t.reg_n;
  for (int64_t v = vecs; v > 1; --v) {
    // v vectors' accumulators per output, v weight vectors and one data vector.
    if (vecs % v == 0 && fits_registers(outputs * v, v + 1, target)) return v * simd;
  }
  return simd;
}

int64_t oc_chunks(const Geometry& g, const Tiling& t) { return ceil_div(g.k, t.oc_bn); }

bool ragged(const Geometry& g, const Tiling& t) { return g.k % t.oc_bn != 0; }

ir::Buffer row_workspace(const Geometry& g, const Tiling& t, bool packed_output) {
  if (packed_output) return ir::Buffer();
  TiledShape ts = tiled_shape(g, t);
  int64_t row = t.oh_factor * ts.q_pad * t.oc_bn;
  if (row + t.oh_factor * t.reg_n * t.oc_bn <= kMaxLocalFloats) return ir::Buffer();
  return ir::Buffer("conv_rows", {g.n * oc_chunks(g, t) * ts.oh_chunks * row},
                    ir::BufferScope::kWorkspace);
}

Result<ir::Buffer> data_buffer(const Geometry& g, const ActivationLayout& layout) {
  int64_t b = layout.data_block;
  if (b == 0) return ir::Buffer("data", {g.n, g.c, g.h, g.w}, ir::BufferScope::kArgument);
  if (b < 0 || g.c % b != 0) {
    return InstantiationError("data block " + std::to_string(b) + " does not divide the " +
                              std::to_string(g.c) + " input channels");
  }
  return ir::Buffer("data", {g.n, g.c / b, g.h, g.w, b}, ir::BufferScope::kArgument);
}

ir::Buffer output_buffer(const Geometry& g, int64_t oc_bn, const ActivationLayout& layout) {
  if (!layout.packed_output) {
    return ir::Buffer("output", {g.n, g.k, g.p, g.q}, ir::BufferScope::kArgument);
  }
  return ir::Buffer("output", {g.n, g.k / oc_bn, g.p, g.q, oc_bn}, ir::BufferScope::kArgument);
}

Stmt compute(const Geometry& g, const Tiling& t, const TargetInfo& target, const ir::Buffer& bias,
             const ir::Buffer& output, const ir::Buffer& rows,
             const std::function<Stmt(const Tile&)>& reduction, bool packed_output,
             bool rows_outer) {
  TiledShape ts = tiled_shape(g, t);
  const int64_t chunks = oc_chunks(g, t);
  int64_t row_floats = t.oh_factor * ts.q_pad * t.oc_bn;
  Expr f = ir::var("n_occ_oh"), owc = ir::var("owc");
  std::vector<Expr> fused;  // n, oc_chunk, oh_chunk
  if (rows_outer) {
    fused = unfuse(f, {g.n, ts.oh_chunks, chunks});
    std::swap(fused[1], fused[2]);
  } else {
    fused = unfuse(f, {g.n, chunks, ts.oh_chunks});
  }
  Expr oh_chunk0 = fused[2] * Expr(t.oh_factor);
  // An accumulator over the stack cap is computed sub-tile by sub-tile (serial loops over
  // blocks of rows, columns and lanes); each output still sums its terms in the same order.
  const Tiling st = fitted_tiling(t);
  SerialBlocks oh_blocks("ohblk", t.oh_factor / st.oh_factor);
  SerialBlocks ow_blocks("owblk", t.reg_n / st.reg_n);
  SerialBlocks lane_blocks("ocblk", t.oc_bn / st.oc_bn);
  Expr oh_offset = oh_blocks.index * Expr(st.oh_factor);
  Tile tile{fused[0],
            fused[1],
            oh_chunk0 + oh_offset,
            owc * Expr(t.reg_n) + ow_blocks.index * Expr(st.reg_n),
            lane_blocks.index * Expr(st.oc_bn),
            ir::Buffer("acc", {st.oh_factor * st.reg_n * st.oc_bn}, ir::BufferScope::kLocal),
            st};
  Expr oc0 = tile.oc_chunk * Expr(t.oc_bn);

  // One tile: acc = bias; reduction; acc -> row (or, packed, -> output).
  Stmt init = tile_loop(st, [&](const Expr& index, const Expr&, const Expr&, const Expr& v) {
    return ir::StoreFlat(tile.acc, index, bias.load_flat(oc0 + (tile.lane0 + v)));
  });
  auto tiles_with = [&](const Stmt& write_back) {
    Stmt blocks = oh_blocks.wrap(
        ow_blocks.wrap(lane_blocks.wrap(ir::Seq({init, reduction(tile), write_back}))));
    return limit_unrolling(
        ir::For(owc, ts.ow_chunks, LoopKind::kSerial, ir::Allocate(tile.acc, blocks)),
        kMaxUnrolledVectorOps, kReshapedUnrollOps, target);
  };

  if (packed_output) {
    // NCHW{oc_bn}c output: the accumulators go straight to it, each output vector written once
    // (no row buffer and copy, which cost a store and a load per output vector in a second
    // pass). Columns and rows of a tail tile past the output are computed on padding and not
    // stored.
    Expr ohi = ir::var("ohi"), j = ir::var("j");
    Expr oh = oh_chunk0 + oh_offset + ohi, ow = tile.ow0 + j;
    Stmt store = vector_loop("v", st.oc_bn, [&](const Expr& v) {
      Expr index = (ohi * Expr(st.reg_n) + j) * Expr(st.oc_bn) + v;
      return ir::Store(output, {tile.n, tile.oc_chunk, oh, ow, tile.lane0 + v},
                       tile.acc.load_flat(index));
    });
    if (ts.q_pad != g.q) store = ir::If(ow < Expr(g.q), store);
    if (ts.p_pad != g.p) store = ir::If(oh < Expr(g.p), store);
    Stmt write_back = ir::For(ohi, st.oh_factor, LoopKind::kUnrolled,
                              ir::For(j, st.reg_n, LoopKind::kUnrolled, store));
    return ir::For(f, g.n * chunks * ts.oh_chunks, LoopKind::kParallel, tiles_with(write_back));
  }

  bool local_row = !rows.defined();
  ir::Buffer row = local_row ? ir::Buffer("row", {row_floats}, ir::BufferScope::kLocal) : rows;
  Expr row_base = local_row ? Expr(0) : f * Expr(row_floats);
  auto row_index = [&](const Expr& ohi, const Expr& col, const Expr& v) {
    return row_base + (ohi * Expr(ts.q_pad) + col) * Expr(t.oc_bn) + v;
  };

  Stmt tiles = tiles_with(
      tile_loop(st, [&](const Expr& index, const Expr& ohi, const Expr& j, const Expr& v) {
        return ir::StoreFlat(row, row_index(oh_offset + ohi, tile.ow0 + j, tile.lane0 + v),
                             tile.acc.load_flat(index));
      }));

  // Row buffer -> NCHW output: SIMD bodies along the output width (gathers from the row),
  // skipping the padded tail columns and rows.
  int64_t lanes = std::clamp<int64_t>(target.simd_lanes, 1, kMaxSimdLanes);
  Expr ohi = ir::var("ohi"), v = ir::var("v");
  auto copy = [&](const Expr& col) {
    // Per-dimension indices: a fused epilogue (compiler/) reads the output channel from them.
    return ir::Store(output, {tile.n, oc0 + v, oh_chunk0 + ohi, col},
                     row.load_flat(row_index(ohi, col, v)));
  };
  std::vector<Stmt> columns;
  if (g.q / lanes > 0) {
    Expr qo = ir::var("qo"), qi = ir::var("qi");
    columns.push_back(
        ir::For(qo, g.q / lanes, LoopKind::kSerial,
                ir::For(qi, lanes, LoopKind::kVectorized, copy(qo * Expr(lanes) + qi))));
  }
  if (g.q % lanes > 0) {
    Expr qt = ir::var("qt");
    columns.push_back(
        ir::For(qt, g.q % lanes, LoopKind::kVectorized, copy(Expr(g.q / lanes * lanes) + qt)));
  }
  Stmt channel_rows = ir::Seq(columns);
  // A ragged block's last chunk holds padding lanes past the K channels: never stored.
  if (ragged(g, t)) channel_rows = ir::If(oc0 + v < Expr(g.k), channel_rows);
  Stmt row_copy = ir::For(v, t.oc_bn, LoopKind::kSerial, channel_rows);
  if (ts.p_pad != g.p) row_copy = ir::If(oh_chunk0 + ohi < Expr(g.p), row_copy);
  Stmt unpack = ir::For(ohi, t.oh_factor, LoopKind::kSerial, row_copy);

  Stmt body = ir::Seq({tiles, unpack});
  if (local_row) body = ir::Allocate(row, body);
  return ir::For(f, g.n * chunks * ts.oh_chunks, LoopKind::kParallel, body);
}

bool reads_chunks_in_place(int64_t data_block, int64_t ic_bn, bool own_chunks) {
  if (data_block <= 0 || ic_bn <= 0 || data_block % ic_bn != 0) return false;
  return data_block == ic_bn || own_chunks || ic_bn % kCacheLineFloats == 0;
}

Expr load_channel(const ir::Buffer& data, const Expr& n, const Expr& c0, const Expr& h,
                  const Expr& x, const Expr& lane) {
  if (data->shape.size() != 5) return data.load({n, c0 + lane, h, x});
  const Expr block(data->shape[4]);
  return data.load({n, c0 / block, h, x, c0 % block + lane});
}

DataLoad chunk_load(const ir::Buffer& data, int64_t ic_bn) {
  if (data->shape.size() == 5 && data->shape[4] == ic_bn) {
    return
        [data](const Expr& n, const Expr& chunk, const Expr& h, const Expr& x, const Expr& lane) {
          return data.load({n, chunk, h, x, lane});
        };
  }
  return [data, ic_bn](const Expr& n, const Expr& chunk, const Expr& h, const Expr& x,
                       const Expr& lane) {
    return load_channel(data, n, chunk * Expr(ic_bn), h, x, lane);
  };
}

namespace {

// A border tile's window: the input rows and columns one tile reads, of the channels it reads,
// zero where they fall in the padding or past the data; [chunks, rows, cols, lanes].
struct Window {
  int64_t chunks = 0, rows = 0, cols = 0, lanes = 0;
  int64_t floats() const { return chunks * rows * cols * lanes; }
};

Window window_of(const Geometry& g, const Tiling& st, TileInputs inputs, int64_t ic_bn) {
  Window w;
  w.rows = (st.oh_factor - 1) * g.stride_h + (g.r - 1) * g.dilation + 1;
  w.cols = (st.reg_n - 1) * g.stride_w + (g.s - 1) * g.dilation + 1;
  w.chunks = inputs == TileInputs::kAll        ? g.c / ic_bn
             : inputs == TileInputs::kOwnGroup ? g.c / g.groups / ic_bn
                                               : 1;
  w.lanes = inputs == TileInputs::kOwnLanes ? st.oc_bn : ic_bn;
  return w;
}

// The reduction of `tile` reading unpadded data in place through `source` (chunk and lane of
// block ic_bn, unpadded coordinates): a tile whose window lies inside the data reads it there;
// any other a copy of its window on the stack.
Stmt window_reduction(const Geometry& g, const DirectConv& conv, const Tile& tile,
                      const DataLoad& source, const ir::Buffer& kernel_vec) {
  const Window w = window_of(g, tile.tiling, conv.tile_inputs, conv.ic_bn);
  // The window's first row and column in the unpadded data (negative inside the padding).
  Expr h0 = tile.oh0 * Expr(g.stride_h) - Expr(g.pad_h);
  Expr x0 = tile.ow0 * Expr(g.stride_w) - Expr(g.pad_w);
  Expr interior = h0 >= Expr(0) && h0 + Expr(w.rows) <= Expr(g.h) && x0 >= Expr(0) &&
                  x0 + Expr(w.cols) <= Expr(g.w);
  DataLoad direct = [&](const Expr& n, const Expr& chunk, const Expr& h, const Expr& x,
                        const Expr& lane) {
    return source(n, chunk, h - Expr(g.pad_h), x - Expr(g.pad_w), lane);
  };

  // Which chunks and lanes the window holds, from chunk0 and lane0 on: every chunk; the chunks
  // of the tile's group (kOwnGroup: its output channel's group times the chunks of a group); or
  // the tile's own lanes (kOwnLanes: input channels oc_chunk * oc_bn + lane0 on, inside one
  // chunk as ic_bn % oc_bn == 0).
  const bool own_lanes = conv.tile_inputs == TileInputs::kOwnLanes;
  Expr c0 = tile.oc_chunk * Expr(conv.tiling.oc_bn) + tile.lane0;
  const bool own_group = conv.tile_inputs == TileInputs::kOwnGroup;
  Expr chunk0 = own_lanes   ? c0 / Expr(conv.ic_bn)
                : own_group ? c0 / Expr(g.k / g.groups) * Expr(w.chunks)
                            : Expr(0);
  Expr lane0 = own_lanes ? c0 % Expr(conv.ic_bn) : Expr(0);

  ir::Buffer window("window", {w.chunks, w.rows, w.cols, w.lanes}, ir::BufferScope::kLocal);
  Expr wk = ir::var("wk"), r = ir::var("wr"), c = ir::var("wc");
  Expr h = h0 + r, x = x0 + c;
  Expr inside = h >= Expr(0) && h < Expr(g.h) && x >= Expr(0) && x < Expr(g.w);
  auto fill = [&](bool zero) {
    return vector_loop("wl", w.lanes, [&](const Expr& l) {
      Expr value = zero ? ir::f32(0) : source(tile.n, chunk0 + wk, h, x, lane0 + l);
      return ir::Store(window, {wk, r, c, l}, value);
    });
  };
  Stmt copy = ir::LoopNest({{wk, w.chunks}, {r, w.rows}, {c, w.cols}},
                           ir::If(inside, fill(false), fill(true)));
  DataLoad from_window = [&](const Expr&, const Expr& chunk, const Expr& hp, const Expr& xp,
                             const Expr& lane) {
    // hp, xp count from the padding's first row and column: h0 + pad_h there. A kOwnLanes
    // reduction reads chunk0 only, a kOwnGroup one its group's chunks from chunk0 on.
    return window.load({own_lanes ? Expr(0) : chunk - chunk0, hp - (h0 + Expr(g.pad_h)),
                        xp - (x0 + Expr(g.pad_w)), lane - lane0});
  };
  Stmt padded = ir::Seq({copy, conv.reduction(tile, from_window, kernel_vec)});
  return ir::If(interior, conv.reduction(tile, direct, kernel_vec), ir::Allocate(window, padded));
}

}  // namespace

bool packs_data(const ir::Program& program) {
  for (const ir::Stage& stage : program.stages) {
    if (stage.name.ends_with("_pack_data")) return true;
  }
  return false;
}

Result<ir::Program> direct_conv_program(const Geometry& g, const DirectConv& conv,
                                        const TargetInfo& target, const ActivationLayout& layout) {
  const Tiling& t = conv.tiling;
  TiledShape ts = tiled_shape(g, t);
  const bool is_ragged = ragged(g, t);
  if (is_ragged && layout.packed_output) {
    return InstantiationError("output block " + std::to_string(t.oc_bn) + " does not divide the " +
                              std::to_string(g.k) +
                              " output channels: a ragged block writes an NCHW output only");
  }
  KILN_ASSIGN_OR_RETURN(ir::Buffer data, data_buffer(g, layout));
  ir::Buffer weight("weight", conv.weight_shape, ir::BufferScope::kArgument);
  ir::Buffer bias("bias", {g.k}, ir::BufferScope::kArgument);
  ir::Buffer output = output_buffer(g, t.oc_bn, layout);
  // Data that arrives in the kernel's own block, or in a block of several of its chunks, with no
  // padding to add (pad 0, and every row and column the tiles read inside it) is the packed
  // workspace already: the compute stage reads it in place, with no copy (1x1 convs between
  // packed neighbours, the most of MobileNet's; a group conv's group-wide chunks). Where
  // the kernel pads, a reduction whose tile inputs are described still reads it in place: its
  // border tiles pad a copy of their window (window_reduction), a fraction of the memory traffic
  // of a padded copy of the whole input. Under a packed layout (a compiled model's kernel) so is
  // NCHW data, when every input channel's row is read (kAll, kOwnGroup: the stem conv of a CNN,
  // a group conv after an NCHW operator). The default layout keeps AutoTVM's program: data
  // packed, then the timed compute.
  const bool own_chunks =
      conv.tile_inputs == TileInputs::kOwnGroup || conv.tile_inputs == TileInputs::kOwnLanes;
  DataLoad source;
  if (reads_chunks_in_place(layout.data_block, conv.ic_bn, own_chunks)) {
    source = chunk_load(data, conv.ic_bn);
  } else if (layout.data_block == 0 && !layout.is_default() &&
             (conv.tile_inputs == TileInputs::kAll || conv.tile_inputs == TileInputs::kOwnGroup)) {
    source = chunk_load(data, conv.ic_bn);
  }
  const bool nothing_to_pad = g.pad_h == 0 && g.pad_w == 0 && ts.h_pad <= g.h && ts.w_pad <= g.w;
  const bool windows =
      source && !nothing_to_pad && conv.tile_inputs != TileInputs::kUndescribed &&
      window_of(g, fitted_tiling(t), conv.tile_inputs, conv.ic_bn).floats() <= kMaxWindowFloats;
  const bool in_place = source && (nothing_to_pad || windows);
  // A reader of its own chunks in a wider block runs its tiles row by row across the chunks
  // (reads_chunks_in_place).
  const bool rows_outer = in_place && own_chunks && layout.data_block != conv.ic_bn;
  ir::Buffer data_vec = in_place ? ir::Buffer() : packed_data_buffer(g, ts, conv.ic_bn);
  ir::Buffer kernel_vec("kernel_vec", conv.kernel_vec_shape, ir::BufferScope::kWorkspace);
  ir::Buffer rows = row_workspace(g, t, layout.packed_output);

  // A ragged block reads its bias from a copy padded with zeros to whole blocks, packed with
  // the weights (untimed; a compiled model packs both once, at compile time).
  ir::Buffer bias_vec =
      is_ragged ? ir::Buffer("bias_vec", {oc_chunks(g, t) * t.oc_bn}, ir::BufferScope::kWorkspace)
                : bias;
  Stmt pack_weight = conv.pack_weight(weight, kernel_vec);
  if (is_ragged) {
    Expr oc = ir::var("oc");
    pack_weight =
        ir::Seq({pack_weight,
                 ir::For(oc, oc_chunks(g, t) * t.oc_bn, LoopKind::kSerial,
                         ir::If(oc < Expr(g.k), ir::StoreFlat(bias_vec, oc, bias.load_flat(oc)),
                                ir::StoreFlat(bias_vec, oc, ir::f32(0))))});
  }

  ir::Program program;
  program.name = conv.name;
  program.buffers = {data, weight, bias, output};
  if (!in_place) program.buffers.push_back(data_vec);
  program.buffers.push_back(kernel_vec);
  if (rows.defined()) program.buffers.push_back(rows);
  if (is_ragged) program.buffers.push_back(bias_vec);
  program.num_inputs = 3;
  program.num_outputs = 1;
  auto reduction = [&](const Tile& tile) {
    if (windows) return window_reduction(g, conv, tile, source, kernel_vec);
    return conv.reduction(tile, in_place ? source : chunk_load(data_vec, conv.ic_bn), kernel_vec);
  };
  program.stages = {
      {conv.name + "_pack_weight", pack_weight, false},
      {conv.name + "_compute",
       compute(g, t, target, bias_vec, output, rows, reduction, layout.packed_output, rows_outer),
       true}};
  if (!in_place) {
    program.stages.insert(
        program.stages.begin(),
        {conv.name + "_pack_data", pack_data(g, conv.ic_bn, data, data_vec), false});
  }
  return program;
}

}  // namespace kiln::ops::conv
