#include "ops/default_config.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <variant>

#include "ops/schedule_util.h"

namespace kiln::ops {

namespace {

// Vector loads (or load-broadcasts) a core issues per cycle: two on every CPU kiln describes
// (Zen 1-5, Intel Haswell to Granite Rapids, Neoverse and Cortex-A cores).
constexpr double kLoadsPerCycle = 2.0;

}  // namespace

bool fits_registers(int64_t accumulators, int64_t operands, const TargetInfo& target) {
  return accumulators + operands <= target.vector_registers;
}

double tile_efficiency(const RegisterTile& tile, const TargetInfo& target) {
  if (tile.accumulators <= 0 || tile.fmas <= 0) return 0.0;
  if (!fits_registers(tile.accumulators, tile.operands, target)) return 0.0;
  const double units = std::max(1, target.fma_units);
  const double cycles =
      std::max({tile.fmas / units, tile.loads / kLoadsPerCycle,
                static_cast<double>(std::max(1, target.fma_latency)) *
                    static_cast<double>(tile.fmas) / static_cast<double>(tile.accumulators)});
  return tile.useful * tile.fmas / (cycles * units);
}

bool BestTile::offer(const RegisterTile& tile) {
  const double eff = tile_efficiency(tile, target_);
  if (eff > efficiency_ + tie_ || (eff > efficiency_ - tie_ && tile.fmas > fmas_)) {
    efficiency_ = eff;
    fmas_ = tile.fmas;
    return true;
  }
  return false;
}

int64_t rows_per_l1_set(int64_t rows, int64_t row_stride_bytes) {
  const int64_t sets = kL1SetStrideBytes / std::gcd(row_stride_bytes, kL1SetStrideBytes);
  return (rows + sets - 1) / sets;
}

int64_t vectors_of(int64_t lanes, const TargetInfo& target) {
  const int64_t simd = std::max(1, target.simd_lanes);
  return (lanes + simd - 1) / simd;
}

int64_t channel_block(int64_t channels, int64_t max_vectors, const TargetInfo& target) {
  const int64_t simd = std::max(1, target.simd_lanes);
  // The lane use of d, d / (vectors_of(d) * simd), against best's, cross-multiplied (exact).
  int64_t best = 1;
  for (int64_t d = 2; d <= std::max<int64_t>(1, max_vectors) * simd && d <= channels; ++d) {
    if (channels % d != 0) continue;
    const int64_t lhs = d * vectors_of(best, target), rhs = best * vectors_of(d, target);
    if (lhs >= rhs) best = d;  // a higher lane use, or the same with more channels per broadcast
  }
  return best;
}

std::vector<int64_t> split_inner_factors(const Knob& knob) {
  std::set<int64_t> factors;
  for (const Entity& e : knob.entities) {
    const auto* split = std::get_if<SplitEntity>(&e);
    if (split && !split->size.empty()) factors.insert(split->size.back());
  }
  return {factors.begin(), factors.end()};
}

SplitEntity two_way_split(int64_t length, int64_t inner) {
  return SplitEntity{{(length + inner - 1) / inner, inner}};
}

}  // namespace kiln::ops
