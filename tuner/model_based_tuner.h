// AutoTVM's ModelBasedTuner (python/tvm/autotvm/tuner/model_based_tuner.py, reference/autotvm.md
// §6): measure a plan of configs the cost model ranks best, refit the model after each plan,
// re-plan with the simulated-annealing optimizer. The first plan (before any success) and the
// last int(0.05 * plan_size) picks of each plan are uniformly random unvisited configs: the
// epsilon-greedy share that keeps the model honest.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/status.h"
#include "costmodel/cost_model.h"
#include "tuner/sa_optimizer.h"
#include "tuner/tuner.h"

namespace kiln::tuner {

struct ModelTunerOptions {
  int plan_size = 64;
  // When set (>= 1), SA proposes plan_size * ratio candidates and the plan keeps the plan_size
  // most diverse of them (AutoTVM's submodular_pick with zero scores).
  std::optional<int> diversity_filter_ratio;
  SaOptions sa;
};

// Where a model-based tuner's own time went (the "tuner overhead" of a run).
struct ModelTunerTimes {
  double fit_s = 0;   // model fits (feature extraction of the training rows included)
  double plan_s = 0;  // simulated annealing (its feature extraction and predictions included)
  int fits = 0;
};

class ModelBasedTuner : public Tuner {
 public:
  // REQUIRES: space and model outlive the tuner.
  ModelBasedTuner(const ConfigSpace& space, costmodel::TrainableModel& model,
                  ModelTunerOptions options, uint64_t seed);

  std::vector<int64_t> next_batch(int n) override;
  void update(const std::vector<int64_t>& indices, const std::vector<double>& flops) override;
  // Unless their update would refit the model (and re-plan), pending results change nothing
  // that next_batch reads.
  bool can_propose_ahead(int64_t pending) const override;

  // Plans the first trials with the model as it is (e.g. a transfer-learned base model), as
  // AutoTVM's load_history does when no plan exists yet. No-op once a plan exists.
  void plan_from_model();

  // A fit failed (the error is kept, tuning goes on with the previous plan and random picks).
  const Status& last_fit_status() const { return last_fit_status_; }
  const ModelTunerTimes& times() const { return times_; }
  int plan_size() const { return options_.plan_size; }

 private:
  void replan();

  costmodel::TrainableModel& model_;
  ModelTunerOptions options_;
  std::mt19937_64 rng_;
  SimulatedAnnealingOptimizer sa_;
  std::vector<int64_t> trials_;  // the current plan
  size_t trial_pt_ = 0;
  std::vector<int64_t> xs_;
  std::vector<double> ys_;
  double flops_max_ = 0;
  int64_t train_ct_ = 0;  // fits so far, counting the plans a block of resumed records filled
  Status last_fit_status_;
  ModelTunerTimes times_;
};

// AutoTVM's submodular_pick with zero scores and knob_weight 1: greedily picks `num` of the
// candidates, each time the one adding the most knob values not yet covered (ties: the earliest
// candidate). Returns positions in `candidates`.
std::vector<size_t> diversity_pick(const std::vector<std::vector<int64_t>>& candidate_knobs,
                                   int num);

}  // namespace kiln::tuner
