#include "ops/packed_matmul.h"

#include <algorithm>
#include <vector>

#include "ops/default_config.h"
#include "ops/limits.h"
#include "ops/schedule_util.h"

namespace kiln::ops {

using ir::Buffer;
using ir::BufferScope;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

Stmt packed_matmul_tile(const PackedMatmulTile& t, const TargetInfo& target) {
  // The accumulator sub-tile: the whole tile when it fits on the stack (the common case, whose
  // nest is then exactly the unblocked one).
  std::vector<int64_t> sub = fit_tile({t.rows, t.lanes}, kMaxLocalFloats);
  const int64_t rows = sub[0], lanes = sub[1];
  SerialBlocks row_blocks("yblk", t.rows / rows), lane_blocks("xblk", t.lanes / lanes);
  Expr y_base = row_blocks.index * Expr(rows), x_base = lane_blocks.index * Expr(lanes);
  Buffer cc("CC", {rows, lanes}, BufferScope::kLocal);

  // for y in [y0, y0 + count) (unrolled): for x (vectorized): stmt(y, x), y and x in CC.
  auto tile_rows = [&](Expr y0, int64_t count, const std::function<Stmt(Expr, Expr)>& stmt) {
    Expr y = ir::var("yi"), x = ir::var("xi");
    return ir::For(y, count, LoopKind::kUnrolled,
                   ir::For(x, lanes, LoopKind::kVectorized, stmt(y0 + y, x)));
  };
  Stmt init = tile_rows(0, rows, [&](Expr y, Expr x) { return ir::Store(cc, {y, x}, ir::f32(0)); });

  Expr ko = ir::var("ko");
  // for ki (unrolled): rows [y0, y0 + count) of CC += A[y, k] * B[k, x].
  auto k_block = [&](Expr y0, int64_t count) {
    Expr ki = ir::var("ki");
    return ir::For(ki, t.k_inner, LoopKind::kUnrolled, tile_rows(y0, count, [&](Expr y, Expr x) {
                     return ir::Store(
                         cc, {y, x},
                         cc.load({y, x}) + t.a(y_base + y, ko, ki) * t.b(ko, ki, x_base + x));
                   }));
  };
  const int64_t block = t.row_block > 1 ? std::min(t.row_block, rows) : rows;
  Stmt kernel;
  if (block == rows) {
    kernel = k_block(0, rows);
  } else {
    Expr yb = ir::var("yb");
    std::vector<Stmt> blocks = {
        ir::For(yb, rows / block, LoopKind::kUnrolled, k_block(yb * Expr(block), block))};
    if (rows % block != 0) blocks.push_back(k_block(Expr(rows / block * block), rows % block));
    kernel = ir::Seq(blocks);
  }
  Stmt update = ir::For(ko, t.k_outer, LoopKind::kSerial, kernel);
  Stmt write = tile_rows(0, rows, [&](Expr y, Expr x) {
    return t.write(y_base + y, x_base + x, cc.load({y, x}));
  });

  Stmt nest = row_blocks.wrap(lane_blocks.wrap(ir::Seq({init, update, write})));
  return ir::Allocate(cc, limit_unrolling(nest, kMaxUnrolledVectorOps, kReshapedUnrollOps, target));
}

EvenRowTiles EvenRowTiles::of(int64_t m, int64_t most) {
  EvenRowTiles t;
  t.tiles = (m + most - 1) / most;
  t.small = m / t.tiles;
  t.big = m % t.tiles;
  return t;
}

Stmt EvenRowTiles::body(const Expr& index,
                        const std::function<Stmt(const Expr& first, int64_t rows)>& tile) const {
  if (big == 0) return tile(index * Expr(small), small);
  return ir::If(index < Expr(big), tile(index * Expr(small + 1), small + 1),
                tile(index * Expr(small) + Expr(big), small));
}

RegisterTile matmul_step(int64_t rows, int64_t lanes, const TargetInfo& target) {
  const int64_t vecs = vectors_of(lanes, target);
  RegisterTile tile;
  tile.accumulators = rows * vecs;
  tile.operands = vecs + 1;
  tile.fmas = tile.accumulators;
  tile.loads = vecs + rows;
  tile.useful =
      static_cast<double>(lanes) / static_cast<double>(vecs * std::max(1, target.simd_lanes));
  return tile;
}

namespace {

// Where rows may be ragged, a split that models up to 2 % faster does not outweigh more FMA
// chains: 7x7 pixels at AVX2 on Zen 4, 6 of 2 vectors ran at 94-108 GFLOPS, 5 (modelled 2 %
// faster) at 93-95 (measured with the rows left over as one last tile, before EvenRowTiles).
constexpr double kRaggedTie = 0.02;

// Offers `chooser` the tiles of `lanes` columns and at most each row count in `row_counts` (rows
// of A `row_stride_bytes` apart), split by EvenRowTiles, the smaller tiles weighed by their own
// throughput; keeps the best in `best`.
void offer_rows(BestTile& chooser, DefaultMatmulTile* best, int64_t m, int64_t lanes,
                const std::vector<int64_t>& row_counts, int64_t row_stride_bytes,
                const TargetInfo& target) {
  for (int64_t rows : row_counts) {
    const EvenRowTiles split = EvenRowTiles::of(m, rows);
    if (rows_per_l1_set(split.largest(), row_stride_bytes) > kMaxRowsPerL1Set) continue;
    RegisterTile tile = matmul_step(split.largest(), lanes, target);
    if (split.big > 0) {
      // The smaller tiles have a row less: the whole's throughput weighs both.
      const double large = tile_efficiency(tile, target);
      const double smaller = tile_efficiency(matmul_step(split.small, lanes, target), target);
      if (large <= 0) continue;
      const double small_rows = static_cast<double>((split.tiles - split.big) * split.small);
      tile.useful *= (static_cast<double>(m) - small_rows + small_rows * smaller / large) /
                     static_cast<double>(m);
    }
    if (chooser.offer(tile)) {
      best->rows = rows;
      best->lanes = lanes;
      best->accumulators = tile.accumulators;
      best->efficiency = tile_efficiency(tile, target);
    }
  }
}

std::vector<int64_t> ragged_row_counts(int64_t m) {
  std::vector<int64_t> out;
  for (int64_t rows = 1; rows <= std::min(m, kMaxRaggedRows); ++rows) out.push_back(rows);
  return out;
}

}  // namespace

DefaultMatmulTile default_matmul_tile(int64_t m, int64_t n, int64_t k, const TargetInfo& target,
                                      bool rows_may_be_ragged) {
  const int64_t simd = std::max(1, target.simd_lanes);
  DefaultMatmulTile best{1, largest_divisor_at_most(n, simd), largest_divisor_at_most(k, 4), 1, 0};
  const std::vector<int64_t> row_counts =
      rows_may_be_ragged ? ragged_row_counts(m) : get_factors(m);
  BestTile chooser(target, rows_may_be_ragged ? kRaggedTie : 1e-9);
  for (int64_t lanes : get_factors(n)) {
    if (vectors_of(lanes, target) >= target.vector_registers) break;
    // The rows of A the tile broadcasts from are K floats apart.
    offer_rows(chooser, &best, m, lanes, row_counts, k * 4, target);
  }
  return best;
}

DefaultMatmulTile default_ragged_rows(int64_t m, int64_t lanes, int64_t row_stride_bytes,
                                      const TargetInfo& target) {
  DefaultMatmulTile best{1, lanes, 1, vectors_of(lanes, target), 0};
  BestTile chooser(target, kRaggedTie);
  offer_rows(chooser, &best, m, lanes, ragged_row_counts(m), row_stride_bytes, target);
  return best;
}

}  // namespace kiln::ops
