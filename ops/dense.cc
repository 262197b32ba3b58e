// dense (nn.Linear): C[M,N] = A[M,K] * W[N,K]^T (+ bias[N]), as TVM's x86 templates
// dense_nopack.x86 and dense_pack.x86 (topi/x86/dense.py at v0.16, reference/autotvm.md §10).
//
// Both templates keep AutoTVM's knobs, entity order and fallbacks, so TVM logs apply. Their
// schedules lower to loop nests written for kiln's code generator: the innermost loop of every
// hot nest is a vectorized loop with a straight-line body whose loads are contiguous (vector)
// or loop-invariant (broadcast), around it unrolled loops, and the accumulator tile is a small
// stack array with constant indices once unrolled, which LLVM keeps in registers.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ops/default_config.h"
#include "ops/dense_common.h"
#include "ops/limits.h"
#include "ops/matmul_node.h"
#include "ops/matmul_splits.h"
#include "ops/packed_matmul.h"
#include "ops/registry.h"
#include "ops/schedule_util.h"

namespace kiln::ops {
namespace {

using ir::Buffer;
using ir::BufferScope;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

// ------------------------------------------------------------------------------------------
// dense_nopack.x86: partial sums CC[y, x, 0:vec] over K in chunks of vec = tile_k[-1] (one
// vector FMA per (y, x) and chunk), then a horizontal sum over vec.

class DenseNopack final : public DenseBase {
 public:
  std::string_view name() const override { return "dense_nopack.x86"; }

  ConfigSpace space(const Workload& w) const override {
    DenseShape s = shape(w);
    ConfigSpace space;
    define_matmul_splits(&space, s.m, s.n, s.k, 2);
    return space;
  }

  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    DenseShape s = shape(w);
    int64_t bn = largest_divisor_at_most(s.k, 2 * int64_t{std::max(1, target.simd_lanes)});
    return space
        .make_config({{"tile_y", SplitEntity{{1, s.m}}},
                      {"tile_x", SplitEntity{{s.n, 1}}},
                      {"tile_k", SplitEntity{{s.k / bn, bn}}}})
        .value();  // a failure is a bug of this template
  }

  // kiln's default (ops/default_config.h): vec one or two whole vectors of K, and the
  // CC[ty][tx][vec] tile whose accumulators and operand rows fit the target's registers.
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    DenseShape s = shape(w);
    const int64_t vec = channel_block(s.k, 2, target), vecs = vectors_of(vec, target);
    int64_t best_ty = 1, best_tx = 1;
    BestTile chooser(target);
    for (int64_t ty : get_factors(s.m)) {
      for (int64_t tx : get_factors(s.n)) {
        RegisterTile tile;
        tile.accumulators = ty * tx * vecs;
        tile.operands = std::min(ty, tx) * vecs + 1;  // one side's rows kept, the other loaded
        tile.fmas = tile.accumulators;
        tile.loads = (ty + tx) * vecs;
        tile.useful = static_cast<double>(vec) / static_cast<double>(vecs * target.simd_lanes);
        if (chooser.offer(tile)) {
          best_ty = ty;
          best_tx = tx;
        }
      }
    }
    return space
        .make_config({{"tile_y", SplitEntity{{s.m / best_ty, best_ty}}},
                      {"tile_x", SplitEntity{{s.n / best_tx, best_tx}}},
                      {"tile_k", SplitEntity{{s.k / vec, vec}}}})
        .value();  // a failure is a bug of this template
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    KILN_RETURN_IF_ERROR(default_layout_only(name(), layout));
    DenseShape s = shape(w);
    KILN_ASSIGN_OR_RETURN(MatmulSplits t, matmul_splits(name(), config, s.m, s.n, s.k, 2));
    const int64_t yo_n = t.y[0], ty = t.y[1], xo_n = t.x[0], tx = t.x[1];
    const int64_t ko_n = t.k[0], vec = t.k[1];
    // A CC over the stack cap is computed sub-tile by sub-tile: serial loops over blocks of
    // rows, columns and lanes around init/update/write. Each C[row, col] still adds bias, then
    // the lanes in order, each lane summed over k in order: the unblocked result.
    std::vector<int64_t> sub = fit_tile({ty, tx, vec}, kMaxLocalFloats);
    const int64_t sy = sub[0], sx = sub[1], sv = sub[2];
    SerialBlocks y_blocks("yblk", ty / sy), x_blocks("xblk", tx / sx), v_blocks("vblk", vec / sv);

    Args args = make_args(s);
    Buffer cc("CC", {sy, sx, sv}, BufferScope::kLocal);
    Expr f = ir::var("yo.xo"), yo = f / xo_n, xo = f % xo_n;
    Expr row0 = yo * ty + y_blocks.index * Expr(sy), col0 = xo * tx + x_blocks.index * Expr(sx);
    Expr v0 = v_blocks.index * Expr(sv);

    // CC[y, x, :] = 0, then CC[y, x, v] += A[row, k*vec+v] * W[col, k*vec+v] for every chunk k.
    auto tile_nest = [&](const std::function<Stmt(Expr, Expr, Expr)>& body) {
      Expr y = ir::var("y"), x = ir::var("x"), v = ir::var("v");
      return ir::For(y, sy, LoopKind::kUnrolled,
                     ir::For(x, sx, LoopKind::kUnrolled,
                             ir::For(v, sv, LoopKind::kVectorized, body(y, x, v))));
    };
    Stmt init = tile_nest([&](Expr y, Expr x, Expr v) {
      return ir::Store(cc, {y, x, v}, ir::f32(0));
    });
    Expr k = ir::var("k");
    Stmt update = ir::For(k, ko_n, LoopKind::kSerial, tile_nest([&](Expr y, Expr x, Expr v) {
                            Expr kk = k * vec + (v0 + v);
                            return ir::Store(cc, {y, x, v},
                                             cc.load({y, x, v}) + args.a.load({row0 + y, kk}) *
                                                                      args.w.load({col0 + x, kk}));
                          }));

    // C[row, col] = (bias[col]) + sum over v of CC[y, x, v]; with lane blocks, the first part
    // runs once before them.
    auto c_nest = [&](const std::function<Stmt(Expr, Expr, Expr, Expr)>& body) {
      Expr y = ir::var("yi"), x = ir::var("xi");
      return ir::For(y, sy, LoopKind::kSerial,
                     ir::For(x, sx, LoopKind::kSerial, body(y, x, row0 + y, col0 + x)));
    };
    auto c_init = [&](Expr col) { return s.bias ? args.bias.load({col}) : ir::f32(0); };
    auto add_lanes = [&](Expr y, Expr x, Expr row, Expr col) {
      Expr v = ir::var("kk");
      return ir::For(v, sv, LoopKind::kUnrolled,
                     ir::Store(args.c, {row, col}, args.c.load({row, col}) + cc.load({y, x, v})));
    };
    Stmt tile;
    if (v_blocks.count == 1) {
      Stmt write = c_nest([&](Expr y, Expr x, Expr row, Expr col) {
        return ir::Seq({ir::Store(args.c, {row, col}, c_init(col)), add_lanes(y, x, row, col)});
      });
      tile = ir::Seq({init, update, write});
    } else {
      Stmt start = c_nest([&](Expr, Expr, Expr row, Expr col) {
        return ir::Store(args.c, {row, col}, c_init(col));
      });
      tile = ir::Seq({start, v_blocks.wrap(ir::Seq({init, update, c_nest(add_lanes)}))});
    }
    Stmt body = ir::For(f, yo_n * xo_n, LoopKind::kParallel,
                        ir::Allocate(cc, y_blocks.wrap(x_blocks.wrap(tile))));
    body = limit_unrolling(body, kMaxUnrolledVectorOps, kReshapedUnrollOps, target);
    ir::Program program;
    program.name = std::string(name());
    program.buffers = args.list();
    program.num_inputs = static_cast<int>(program.buffers.size()) - 1;
    program.num_outputs = 1;
    program.stages = {{"dense_nopack_compute", body, true}};
    return program;
  }
};

// ------------------------------------------------------------------------------------------
// dense_pack.x86: W is packed to Wp[N/bn][K][bn] (bn = tile_x[-1]) by an untimed stage, as
// AutoTVM substitutes a pre-packed placeholder while tuning. Each (yo, xo) tile keeps
// CC[tile_y[-1]][bn] in registers: per k, a broadcast of A[row, k] times a vector of Wp.

class DensePack final : public DenseBase {
 public:
  std::string_view name() const override { return "dense_pack.x86"; }
  bool untuned_choice() const override { return true; }

  ConfigSpace space(const Workload& w) const override {
    DenseShape s = shape(w);
    ConfigSpace space;
    define_matmul_splits(&space, s.m, s.n, s.k, 3);
    space.define_split("tile_inner", s.m,
                       factor_splits(2, [](const SplitEntity& e) { return e.size.back() <= 16; }));
    return space;
  }

  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    DenseShape s = shape(w);
    // TVM's middle factor: doubles while more than 4 blocks remain and their count is even.
    auto middle = [](int64_t blocks) {
      int64_t mid = 1;
      while (blocks / mid > 4 && (blocks / mid) % 2 == 0) mid *= 2;
      return mid;
    };
    int64_t x_ii = largest_divisor_at_most(s.n, 2 * int64_t{std::max(1, target.simd_lanes)});
    int64_t x_oi = middle(s.n / x_ii);
    int64_t y_ii = 8;
    while (s.m % y_ii != 0) y_ii /= 2;
    int64_t y_oi = middle(s.m / y_ii);
    return space
        .make_config({{"tile_y", SplitEntity{{s.m / y_ii / y_oi, y_oi, y_ii}}},
                      {"tile_x", SplitEntity{{s.n / x_ii / x_oi, x_oi, x_ii}}},
                      {"tile_k", SplitEntity{{s.k, 1}}},
                      {"tile_inner", SplitEntity{{s.m / y_ii, y_ii}}}})
        .value();  // a failure is a bug of this template
  }

  // kiln's default (ops/default_config.h): the CC tile for the target's registers
  // (default_matmul_tile), no middle tiles, so that the parallel loop runs over every tile, and
  // no row blocking (tile_inner 1).
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    DenseShape s = shape(w);
    DefaultMatmulTile t = default_matmul_tile(s.m, s.n, s.k, target);
    return space
        .make_config({{"tile_y", SplitEntity{{s.m / t.rows, 1, t.rows}}},
                      {"tile_x", SplitEntity{{s.n / t.lanes, 1, t.lanes}}},
                      {"tile_k", SplitEntity{{s.k / t.k_inner, t.k_inner}}},
                      {"tile_inner", SplitEntity{{s.m, 1}}}})
        .value();  // a failure is a bug of this template
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    KILN_RETURN_IF_ERROR(default_layout_only(name(), layout));
    DenseShape s = shape(w);
    KILN_ASSIGN_OR_RETURN(MatmulSplits t, matmul_splits(name(), config, s.m, s.n, s.k, 3));
    KILN_ASSIGN_OR_RETURN(auto tile_inner, tile_sizes(name(), config, "tile_inner", s.m, 2));
    const int64_t yt_n = t.y[0], yo_n = t.y[1], ty = t.y[2];
    const int64_t xt_n = t.x[0], xo_n = t.x[1], bn = t.x[2];
    const int64_t ko_n = t.k[0], kt = t.k[1];
    // TVM splits y by tile_inner[-1] only when it is > 1; a split at least ty wide is no split.
    const int64_t ti = tile_inner[1] > 1 && tile_inner[1] < ty ? tile_inner[1] : ty;

    Args args = make_args(s);
    Buffer wp = packed_weight(s, bn);
    Stmt pack = pack_weight(args, wp, s, bn);  // untimed

    // TVM: fuse(xt, yt) -> parallel, fuse(yo, xo), CC computed at (yo, xo).
    Expr f = ir::var("xt.yt"), xt = f / yt_n, yt = f % yt_n;
    Expr yo = ir::var("yo"), xo = ir::var("xo");
    Expr row0 = (yt * yo_n + yo) * ty, xb = xt * xo_n + xo;
    PackedMatmulTile tile;
    tile.rows = ty;
    tile.lanes = bn;
    tile.k_outer = ko_n;
    tile.k_inner = kt;
    tile.row_block = ti;
    bind_packed_tile(&tile, args, wp, s, row0, xb);
    Stmt tiles = ir::For(yo, yo_n, LoopKind::kSerial,
                         ir::For(xo, xo_n, LoopKind::kSerial, packed_matmul_tile(tile, target)));
    Stmt compute = ir::For(f, xt_n * yt_n, LoopKind::kParallel, tiles);
    return packed_program(args, wp, std::move(pack), std::move(compute));
  }
};

// ------------------------------------------------------------------------------------------
// The operator: Gemm and MatMul nodes whose B is a constant of rank <= 2 (M = rows of A, all its
// leading dimensions flattened; bias=1 for a Gemm bias of N values, beta != 0).

class DenseOperator final : public Operator {
 public:
  std::string_view name() const override { return "dense"; }
  std::vector<std::string> onnx_ops() const override { return {"Gemm", "MatMul"}; }

  Result<std::optional<Workload>> workload_of(const NodeView& node) const override {
    KILN_ASSIGN_OR_RETURN(MatmulOperands m, matmul_operands(node));
    if (!m.constant_matrix_b) return std::optional<Workload>();  // batch_matmul's
    int64_t bias = 0;
    if (!m.terms.c.empty()) {
      const std::vector<int64_t>& c = node.shape(m.terms.c);
      bool per_column =
          (c.size() == 1 && c[0] == m.n) || (c.size() == 2 && c[0] == 1 && c[1] == m.n);
      bias = per_column ? 1 : 0;
    }
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < m.a.size(); ++i) rows *= m.a[i];
    Workload out;
    out.op = "dense";
    out.params = {{"M", rows}, {"N", m.n}, {"K", m.k}, {"bias", bias}};
    return std::optional(out);
  }

  Result<Workload> from_tvm_args(const nlohmann::json& args) const override {
    return matmul_from_tvm_args(std::string(name()), args, /*batched=*/false);
  }

  Result<Binding> bind(const NodeView& node, const Workload& w,
                       ArgumentBinder& binder) const override {
    GemmTerms t = gemm_terms(node);
    const std::vector<std::string>& in = node.inputs();
    KILN_ASSIGN_OR_RETURN(int a,
                          t.trans_a ? binder.operand(in[0], {1}, true) : binder.value(in[0]));
    // The templates want the weight as [N, K]: ONNX's [K, N] is transposed (at compile time).
    KILN_ASSIGN_OR_RETURN(int weight, binder.operand(in[1], {1}, !t.trans_b));
    std::vector<int> args = {a, weight};
    bool c_is_bias = false;
    if (w.at("bias")) {
      if (t.alpha == 1.0f && t.beta == 1.0f) {
        KILN_ASSIGN_OR_RETURN(int b, binder.value(t.c));
        c_is_bias = true;
        args.push_back(b);
      } else {
        args.push_back(binder.zero_bias(w.at("N")));
      }
    }
    return gemm_binding(t, std::move(args), c_is_bias);
  }
};

}  // namespace

const Operator& dense_operator() {
  static const DenseOperator instance;
  return instance;
}

const Template& dense_nopack_template() {
  static const DenseNopack instance;
  return instance;
}

const Template& dense_pack_template() {
  static const DensePack instance;
  return instance;
}

}  // namespace kiln::ops
