// AutoTVM's GATuner (python/tvm/autotvm/tuner/ga_tuner.py, reference/autotvm.md §6): a genetic
// search over knob vectors with no cost model. Each generation is measured whole; the next one
// is bred from it and the elites: parents drawn with probability proportional to throughput,
// single-point crossover, per-knob mutation.
//
// Unlike AutoTVM, a child equal to a config measured before is not measured again (AutoTVM
// re-measures such duplicates): it is redrawn, and after many fruitless draws the generation is
// filled with random unvisited configs, so a converged population cannot stall the run.
#pragma once

#include <random>
#include <unordered_map>
#include <vector>

#include "tuner/tuner.h"

namespace kiln::tuner {

struct GaOptions {
  int pop_size = 100;
  int elite_num = 3;
  double mutation_prob = 0.1;
};

class GaTuner : public Tuner {
 public:
  // REQUIRES: space outlives the tuner.
  GaTuner(const ConfigSpace& space, GaOptions options, uint64_t seed);

  std::vector<int64_t> next_batch(int n) override;
  void update(const std::vector<int64_t>& indices, const std::vector<double>& flops) override;
  // Genes are marked visited when bred, before they are proposed: the unproposed rest of the
  // generation still counts as something to propose.
  bool has_next() const override;
  // While genes of the generation are still to be proposed, pending results cannot complete
  // it, so they cannot trigger the breeding that changes what comes next.
  bool can_propose_ahead(int64_t pending) const override;

  // The current generation's config indices (for tests).
  const std::vector<int64_t>& generation() const { return genes_; }

 private:
  void start_population();
  void breed();

  GaOptions options_;
  std::mt19937_64 rng_;
  std::vector<int64_t> genes_;                  // the generation being measured, as config indices
  size_t trial_pt_ = 0;                         // genes_[0, trial_pt_) have been proposed
  std::unordered_map<int64_t, double> scores_;  // every measured config's throughput
  std::vector<int64_t> elites_;
  bool started_ = false;
};

}  // namespace kiln::tuner
