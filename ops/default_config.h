// kiln's default configs: what an untuned task runs with, chosen for the target without
// measuring (Template::default_config). AutoTVM's fallbacks were written for 32 registers; these
// rules read the target (ops::TargetInfo, from exchange/target_description.h): a register tile
// whose accumulators and operands fit the vector registers and keep the FMA units busy, channel
// blocks of whole vectors whose weights fit the L2 cache, and (the templates' own part) the
// parallel loop over the largest outer extent. Every choice is an entity of the template's own
// space, so a default config is a config of TVM's knobs with TVM's index semantics.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/config_space.h"
#include "ops/template.h"

namespace kiln::ops {

// One step of a register tile's inner loop, as a throughput model reads it.
struct RegisterTile {
  int64_t accumulators = 0;  // vector registers that hold partial sums across the loop
  int64_t operands = 0;      // vector registers for the step's loaded operands
  int64_t fmas = 0;          // vector FMAs per step (each accumulator chain gets fmas/accumulators)
  int64_t loads = 0;         // vector loads and broadcasts per step
  double useful = 1.0;       // share of the computed lanes and columns that are real outputs
};

// Whether `accumulators` live vector registers and `operands` loaded per step fit the target's
// vector registers without spilling (the one fit rule of the default configs' models and the
// templates that size their tiles by it).
bool fits_registers(int64_t accumulators, int64_t operands, const TargetInfo& target);

// The tile's modelled share of the target's FMA peak, in (0, 1]: steps take the longest of the
// FMA issue time, the load issue time (two loads per cycle) and one FMA latency (an accumulator
// waits for its previous FMA), times `useful`. 0 for a tile whose accumulators and operands do
// not fit the vector registers: it would spill.
double tile_efficiency(const RegisterTile& tile, const TargetInfo& target);

// Keeps the best of the tiles offered to it: the highest tile_efficiency, ties (efficiencies
// within `tie` of each other) going to more FMAs per step (more FMA chains than the latency
// needs, fewer loop iterations around the tile), the first offered among equals.
class BestTile {
 public:
  explicit BestTile(const TargetInfo& target, double tie = 1e-9) : target_(target), tie_(tie) {}
  // True when `tile` beats every tile offered before: the caller then keeps its knobs.
  bool offer(const RegisterTile& tile);

 private:
  const TargetInfo& target_;
  double tie_;
  double efficiency_ = -1.0;
  int64_t fmas_ = 0;
};

// Bytes between addresses that share an L1 data cache set on the cores kiln describes (32 KiB
// 8-way and 48 KiB 12-way L1s: 4 KiB). The rows of a row-major matrix whose stride is a multiple
// of it all fall in one set: a register tile that broadcasts from more of them at once than the
// set has ways evicts its own operands every step (measured on Zen 4: dense_pack with K=1024 ran
// at 55 GFLOPS with 16 rows, 116 with 8).
inline constexpr int64_t kL1SetStrideBytes = 4096;
inline constexpr int64_t kMaxRowsPerL1Set = 8;

// How many of `rows` consecutive rows, `row_stride_bytes` apart, share the most loaded L1 set.
int64_t rows_per_l1_set(int64_t rows, int64_t row_stride_bytes);

// Whole vectors of the target that `lanes` float32 lanes occupy (ceil(lanes / simd_lanes)).
int64_t vectors_of(int64_t lanes, const TargetInfo& target);

// The divisor of `channels` of at most max_vectors vectors whose vectors leave the fewest lanes
// idle, the largest of those: v whole vectors where some divide (the most such), else a block
// with a partial vector. 40 channels on 16 lanes take 20 (two vectors, 62.5 % of their lanes
// used) rather than 10 (one vector, as much used, but each input broadcast for half as many
// FMAs); 72 take 24, 120 take 30. Where the vector width divides the channels (every ISA's usual
// case) this is the largest whole-vector block.
int64_t channel_block(int64_t channels, int64_t max_vectors, const TargetInfo& target);

// The inner factors size[-1] the entities of a 2-way split knob offer, ascending, each once.
std::vector<int64_t> split_inner_factors(const Knob& knob);

// The 2-way split of `length` with inner factor `inner`: [ceil(length / inner), inner], as
// make_config accepts it for a knob whose entities include [-1, inner].
SplitEntity two_way_split(int64_t length, int64_t inner);

}  // namespace kiln::ops
