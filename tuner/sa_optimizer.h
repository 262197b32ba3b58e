// AutoTVM's simulated-annealing model optimizer (python/tvm/autotvm/tuner/sa_model_optimizer.py,
// reference/autotvm.md §6): parallel random walks over a config space, scored by a cost model,
// collecting the best-scored configs not measured yet.
#pragma once

#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#include "costmodel/cost_model.h"
#include "ops/config_space.h"

namespace kiln::tuner {

struct SaOptions {
  int n_iter = 500;         // iterations at most
  double temp_start = 1.0;  // temperature falls linearly from temp_start ...
  double temp_end = 0.0;    // ... to temp_end over n_iter + 1 steps
  bool persistent = true;   // walkers continue from where the previous call left them
  int parallel_size = 128;  // walkers (capped at the space's size)
  int early_stop = 50;      // stop after this many iterations without a new top config
};

class SimulatedAnnealingOptimizer {
 public:
  // REQUIRES: `space` outlives the optimizer.
  SimulatedAnnealingOptimizer(const ConfigSpace& space, SaOptions options, uint64_t seed);

  // At most `num` distinct valid configs, none in `exclude`, with the highest scores `model`
  // gave any point the walkers visited, best first; configs scored below 0 are dropped (as
  // AutoTVM does, which matters for rank scores). Each iteration moves every walker one knob
  // (random_walk, tuner/space_walk.h) and accepts the move with probability
  // exp(min((new - old) / (t + 1e-5), 1)).
  std::vector<int64_t> find_maximums(costmodel::CostModel& model, int num,
                                     const std::unordered_set<int64_t>& exclude);

  // Iterations run by the latest find_maximums (for reports and tests).
  int last_iterations() const { return last_iterations_; }

 private:
  const ConfigSpace& space_;
  SaOptions options_;
  std::mt19937_64 rng_;
  std::vector<int64_t> points_;  // walkers kept between calls when persistent
  int last_iterations_ = 0;
};

}  // namespace kiln::tuner
