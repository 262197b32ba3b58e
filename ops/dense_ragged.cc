// dense_pack_ragged.x86: dense_pack.x86's program with a row tile that need not divide M.
//
// dense_pack.x86's register tile has tile_y[-1] rows, a divisor of M. The tile that keeps two FMA
// units busy on a 16-register AVX2 core is 6 rows x 2 vectors (12 accumulators, 2 vectors of B,
// 1 broadcast of A), and 6 divides no power of two: on M = 1024 dense_pack.x86 runs 4 x 2
// vectors, whose 8 FMA chains just cover the FMA latency (measured on Zen 4 at AVX2, 1024^3:
// 82-91 GFLOPS, against 94-106 for 6 rows on M = 1020).
//
// Workload: dense's, for M >= kMinRows (fewer rows: dense_pack.x86's divisors serve them).
//
// Knobs (kiln's own space, not a TVM task; its indices map to no TVM log):
//   tile_rows  the register tile's most rows, 1 to min(M, kMaxRaggedRows) (EvenRowTiles)
//   tile_x     split(N) into [xt, xo, bn] as dense_pack.x86's: bn lanes per tile, xo tiles per
//              parallel iteration
//   tile_k     split(K) into [ko, ki]: ki steps of k unrolled
//
// Program: W is packed to Wp[N/bn][K][bn] (untimed, as dense_pack.x86's). A parallel loop runs
// over (xt, row tile); each row tile of full rows computes, for each of its xo column blocks,
// dense_pack.x86's register tile (ops/packed_matmul.h). The M rows go in ceil(M / tile_rows) row
// tiles as even as they go (EvenRowTiles). Consecutive iterations keep one block of
// Wp (in L2) and walk down the rows of A.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/default_config.h"
#include "ops/dense_common.h"
#include "ops/packed_matmul.h"
#include "ops/registry.h"
#include "ops/schedule_util.h"

namespace kiln::ops {
namespace {

using ir::Buffer;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

constexpr int64_t kMinRows = 8;

class DensePackRagged final : public DenseBase {
 public:
  std::string_view name() const override { return "dense_pack_ragged.x86"; }
  bool extra() const override { return true; }

  Result<Workload> normalize(const Workload& w) const override {
    KILN_ASSIGN_OR_RETURN(Workload out, DenseBase::normalize(w));
    if (out.at("M") < kMinRows) {
      return InvalidArgument(std::string(name()) + " workload " + w.to_string() + ": M=" +
                             std::to_string(out.at("M")) + " is under " + std::to_string(kMinRows) +
                             " rows: dense_pack.x86's row tiles serve it as well");
    }
    return out;
  }

  ConfigSpace space(const Workload& w) const override {
    DenseShape s = shape(w);
    ConfigSpace space;
    std::vector<nlohmann::json> rows;
    for (int64_t r = 1; r <= std::min(s.m, kMaxRaggedRows); ++r) rows.push_back(r);
    space.define_knob("tile_rows", std::move(rows));
    space.define_split("tile_x", s.n, factor_splits(3));
    space.define_split("tile_k", s.k, factor_splits(2));
    return space;
  }

  // dense_pack.x86's fallback shape: 8 rows (fewer where M is smaller), x and k as its fallback.
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    DenseShape s = shape(w);
    const ConfigEntity pack =
        dense_pack_template().fallback(w, dense_pack_template().space(w), target);
    return make(space, std::min<int64_t>(8, s.m), pack.split("tile_x"), pack.split("tile_k"));
  }

  // kiln's default (ops/packed_matmul.h, default_matmul_tile with ragged rows): the register
  // tile for the target's registers, no middle column tiles.
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    DenseShape s = shape(w);
    DefaultMatmulTile t = default_matmul_tile(s.m, s.n, s.k, target, /*rows_may_be_ragged=*/true);
    return make(space, t.rows, SplitEntity{{s.n / t.lanes, 1, t.lanes}},
                SplitEntity{{s.k / t.k_inner, t.k_inner}});
  }

  // Where dense_pack.x86's default tile has no more FMA chains than the FMA units' latency
  // needs (8 on Zen 3: in practice the loads delay some chain, 82-91 GFLOPS on 1024^3 at AVX2)
  // and this template's has more, with rows that do not divide M (6 x 2 vectors: 94-106).
  bool preferred_untuned(const Workload& w, const TargetInfo& target) const override {
    DenseShape s = shape(w);
    const int64_t chains = int64_t{std::max(1, target.fma_latency)} * std::max(1, target.fma_units);
    DefaultMatmulTile ragged = default_matmul_tile(s.m, s.n, s.k, target, true);
    DefaultMatmulTile divisors = default_matmul_tile(s.m, s.n, s.k, target);
    return s.m % ragged.rows != 0 && divisors.accumulators <= chains &&
           ragged.accumulators > chains;
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    KILN_RETURN_IF_ERROR(default_layout_only(name(), layout));
    DenseShape s = shape(w);
    KILN_ASSIGN_OR_RETURN(int64_t rows, row_count(config, s));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> x, tile_sizes(name(), config, "tile_x", s.n, 3));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> k, tile_sizes(name(), config, "tile_k", s.k, 2));
    const int64_t xt_n = x[0], xo_n = x[1], bn = x[2];
    const EvenRowTiles split = EvenRowTiles::of(s.m, rows);
    const int64_t row_tiles = split.tiles;

    Args args = make_args(s);
    Buffer wp = packed_weight(s, bn);
    Stmt pack = pack_weight(args, wp, s, bn);  // untimed

    Expr f = ir::var("xt.r"), xt = f / row_tiles, r = f % row_tiles;
    Expr xo = ir::var("xo");
    Expr xb = xt * xo_n + xo;
    // The xo column blocks of the row tile at row0, `count` rows tall.
    auto row_tile = [&](const Expr& row0, int64_t count) {
      PackedMatmulTile tile;
      tile.rows = count;
      tile.lanes = bn;
      tile.k_outer = k[0];
      tile.k_inner = k[1];
      tile.row_block = count;
      bind_packed_tile(&tile, args, wp, s, row0, xb);
      return ir::For(xo, xo_n, LoopKind::kSerial, packed_matmul_tile(tile, target));
    };
    Stmt compute = ir::For(f, xt_n * row_tiles, LoopKind::kParallel, split.body(r, row_tile));
    return packed_program(args, wp, std::move(pack), std::move(compute));
  }

 private:
  // tile_rows, checked: a config from a record or a user is not trusted.
  Result<int64_t> row_count(const ConfigEntity& config, const DenseShape& s) const {
    KILN_ASSIGN_OR_RETURN(nlohmann::json rows, option(config, "tile_rows"));
    const int64_t most = std::min(s.m, kMaxRaggedRows);
    if (!rows.is_number_integer() || rows.get<int64_t>() < 1 || rows.get<int64_t>() > most) {
      return InstantiationError(std::string(name()) + ": tile_rows = " + rows.dump() +
                                " is not an integer in [1, " + std::to_string(most) + "]");
    }
    return rows.get<int64_t>();
  }

  static ConfigEntity make(const ConfigSpace& space, int64_t rows, SplitEntity x, SplitEntity k) {
    Result<ConfigEntity> config = space.make_config({{"tile_rows", OtherOptionEntity{rows}},
                                                     {"tile_x", std::move(x)},
                                                     {"tile_k", std::move(k)}});
    return std::move(config).value();  // every entity is in the space: a failure is a bug
  }
};
}  // namespace

const Template& dense_pack_ragged_template() {
  static const DensePackRagged instance;
  return instance;
}

}  // namespace kiln::ops
