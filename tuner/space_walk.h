// Random search over a ConfigSpace: uniform draws of valid indices, AutoTVM's random walk, and
// sampling without replacement, with the semantics of AutoTVM's ConfigSpace helpers
// (reference/autotvm.md §1). Randomness comes only from `rng`; the same seed gives the same
// results on every platform (no std::*_distribution is used).
#pragma once

#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#include "ops/config_space.h"

namespace kiln::tuner {

// A uniformly random valid index, or -1 when the space has no valid index.
int64_t random_index(const ConfigSpace& space, std::mt19937_64& rng);
// A random valid index not in `exclude`, or -1 when every valid index is excluded.
int64_t random_index(const ConfigSpace& space, std::mt19937_64& rng,
                     const std::unordered_set<int64_t>& exclude);

// AutoTVM's random_walk: set one random knob to a random value, repeated (changes accumulate)
// while the point equals `index` or is invalid. REQUIRES 0 <= index < space.range_length().
// Returns `index` itself when no other valid index exists and -1 when there is no valid index
// at all (AutoTVM loops forever in both cases). After 2^20 fruitless steps (a nearly empty
// filtered space) it returns a random valid index other than `index` instead.
int64_t random_walk(const ConfigSpace& space, int64_t index, std::mt19937_64& rng);

// min(m, space.size()) distinct valid indices in the order drawn; empty when the space is empty.
std::vector<int64_t> sample_ints(const ConfigSpace& space, int64_t m, std::mt19937_64& rng);

}  // namespace kiln::tuner
