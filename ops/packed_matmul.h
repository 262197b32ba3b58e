// The register-blocked matmul tile shared by dense_pack.x86 and batch_matmul.x86: for one
// (row block, column block) of the output, an accumulator CC[rows][lanes] kept in registers,
// per k a broadcast of A[row, k] times a vector of the packed B[k, 0:lanes].
//
//   CC = 0
//   for ko (serial): for ki (unrolled, k_inner): for y (unrolled): for x (vectorized):
//     CC[y, x] += A(y, ko, ki) * B(ko, ki, x)
// (a matrix product reads k = ko * k_inner + ki; a 1x1 convolution chunk ko, lane ki)
//   for y (unrolled): for x (vectorized): write(y, x, CC[y, x])
//
// With row_block < rows (dense_pack's tile_inner), the rows go in blocks of row_block, each
// over all ki, and a last partial block of rows % row_block rows is its own nest.
//
// Every config builds: a CC over the stack cap is computed sub-tile by sub-tile (serial loops
// over row and column blocks around the whole init/update/write), and an unrolled nest over
// kMaxUnrolledVectorOps keeps its outer part as serial loops (limit_unrolling). Both keep each
// output's sum in the same order, so the result is the unblocked one.
#pragma once

#include <cstdint>
#include <functional>

#include "ir/ir.h"
#include "ops/default_config.h"
#include "ops/template.h"

namespace kiln::ops {

struct PackedMatmulTile {
  int64_t rows = 1;       // rows of the output tile (tile_y[-1])
  int64_t lanes = 1;      // columns of the output tile, the vector lanes (tile_x[-1])
  int64_t k_outer = 1;    // serial k steps
  int64_t k_inner = 1;    // unrolled k steps per serial step (tile_k[-1])
  int64_t row_block = 1;  // rows per unrolled block (== rows for no blocking)
  // The operands and the result, for tile row y, column x and reduction step (ko, ki).
  std::function<ir::Expr(const ir::Expr& y, const ir::Expr& ko, const ir::Expr& ki)> a;
  std::function<ir::Expr(const ir::Expr& ko, const ir::Expr& ki, const ir::Expr& x)> b;
  std::function<ir::Stmt(const ir::Expr& y, const ir::Expr& x, const ir::Expr& value)> write;
};

// The tile's statement: allocates CC and computes the whole output tile.
ir::Stmt packed_matmul_tile(const PackedMatmulTile& tile, const TargetInfo& target);

// Rows taken in tiles of at most `most` (conv2d_NCHWc_flat.x86's tile_px, dense_pack_ragged.x86's
// tile_rows): ceil(m / most) tiles as even as they go, the first `big` of them small + 1 rows and
// the others `small`. (A last tile of the m % most rows left over would run a row or two on a few
// FMA chains, latency-bound: on a 7x7 output at AVX2, 6 pixels a tile with a last tile of 1 ran
// 4-5 % slower than tiles of 6 and 5.) When `most` divides m, every tile has `most` rows.
struct EvenRowTiles {
  int64_t tiles = 1;  // ceil(m / most)
  int64_t small = 1;  // m / tiles rows in the smaller tiles
  int64_t big = 0;    // m % tiles tiles of small + 1 rows, before the smaller ones

  // REQUIRES: 1 <= most <= m.
  static EvenRowTiles of(int64_t m, int64_t most);
  int64_t largest() const { return small + (big > 0 ? 1 : 0); }
  // The statement of tile `index` (0 <= index < tiles): `tile(first row, rows)` with the tile's
  // first row and its row count (one branch per count).
  ir::Stmt body(const ir::Expr& index,
                const std::function<ir::Stmt(const ir::Expr& first, int64_t rows)>& tile) const;
};

// The default-config model of one reduction step of the CC[rows][lanes] tile
// (ops/default_config.h): a row of B's vectors and one broadcast of A at a time, lanes padded to
// whole vectors.
RegisterTile matmul_step(int64_t rows, int64_t lanes, const TargetInfo& target);

// kiln's default tile for an m x n output (ops/default_config.h): rows (at most kMaxRowsPerL1Set
// of them in one L1 set, A's rows being k floats apart) and lanes among the divisors of n whose
// CC[rows][lanes] and operands fit the target's vector registers with the best modelled FMA
// throughput; k_inner unrolls up to 4 steps of k. Rows are divisors of m; with
// `rows_may_be_ragged`, any count up to kMaxRaggedRows (and m), the m % rows rows left over
// being one smaller tile, weighed by its own throughput.
inline constexpr int64_t kMaxRaggedRows = 16;
struct DefaultMatmulTile {
  int64_t rows = 1, lanes = 1, k_inner = 1;
  int64_t accumulators = 1;  // vector registers of CC: independent FMA chains
  double efficiency = 0;     // its modelled share of the FMA peak (tile_efficiency)
};
DefaultMatmulTile default_matmul_tile(int64_t m, int64_t n, int64_t k, const TargetInfo& target,
                                      bool rows_may_be_ragged = false);
// The ragged row count default_matmul_tile would choose for tiles of exactly `lanes` columns, the
// rows of A `row_stride_bytes` apart (k_inner left 1).
DefaultMatmulTile default_ragged_rows(int64_t m, int64_t lanes, int64_t row_stride_bytes,
                                      const TargetInfo& target);

}  // namespace kiln::ops
