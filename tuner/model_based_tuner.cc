#include "tuner/model_based_tuner.h"

#include <chrono>
#include <cmath>
#include <set>

#include "common/stopwatch.h"
#include "tuner/space_walk.h"

namespace kiln::tuner {

ModelBasedTuner::ModelBasedTuner(const ConfigSpace& space, costmodel::TrainableModel& model,
                                 ModelTunerOptions options, uint64_t seed)
    : Tuner(space),
      model_(model),
      options_(std::move(options)),
      rng_(seed),
      // The optimizer gets its own stream, so that random picks and SA walks do not interleave
      // differently when plans change length.
      sa_(space, options_.sa, seed ^ 0x9e3779b97f4a7c15ULL) {}

std::vector<int64_t> ModelBasedTuner::next_batch(int n) {
  std::vector<int64_t> out;
  const size_t epsilon_tail = static_cast<size_t>(0.05 * options_.plan_size);
  while (static_cast<int>(out.size()) < n && has_next()) {
    while (trial_pt_ < trials_.size() &&
           (visited_.count(trials_[trial_pt_]) || !space_.is_index_valid(trials_[trial_pt_]))) {
      ++trial_pt_;
    }
    int64_t index;
    if (trial_pt_ + epsilon_tail >= trials_.size()) {
      // No plan yet, or the last 5 % of the plan: a random unvisited config.
      index = random_index(space_, rng_, visited_);
      if (index < 0) break;
    } else {
      index = trials_[trial_pt_];
    }
    visited_.insert(index);
    out.push_back(index);
  }
  return out;
}

void ModelBasedTuner::update(const std::vector<int64_t>& indices,
                             const std::vector<double>& flops) {
  for (size_t i = 0; i < indices.size(); ++i) {
    // NaN or infinite throughput is not a measurement: it trains as a failure.
    double y = std::isfinite(flops[i]) && flops[i] > 0 ? flops[i] : 0.0;
    xs_.push_back(indices[i]);
    ys_.push_back(y);
    flops_max_ = std::max(flops_max_, y);
    visited_.insert(indices[i]);
  }
  if (static_cast<int64_t>(xs_.size()) >=
          static_cast<int64_t>(options_.plan_size) * (train_ct_ + 1) &&
      flops_max_ > 1e-6) {
    auto start = std::chrono::steady_clock::now();
    last_fit_status_ = model_.fit(xs_, ys_, options_.plan_size);
    times_.fit_s += seconds_since(start);
    ++times_.fits;
    // A failed fit keeps the previous plan; the counter still advances, so the next attempt
    // comes a plan later instead of after every batch.
    if (last_fit_status_.ok()) replan();
    // The next fit comes a plan of new measurements later. One call may bring many: a resumed
    // task's records replayed at once (tune_loop.h), which one fit covers; counting one fit per
    // call would then refit after every batch until the count caught up (and stop the
    // pipelining meanwhile, see can_propose_ahead).
    const int64_t plans = static_cast<int64_t>(xs_.size()) / options_.plan_size;
    train_ct_ = std::max<int64_t>(train_ct_ + 1, plans);
  }
}

bool ModelBasedTuner::can_propose_ahead(int64_t pending) const {
  return static_cast<int64_t>(xs_.size()) + pending <
         static_cast<int64_t>(options_.plan_size) * (train_ct_ + 1);
}

void ModelBasedTuner::plan_from_model() {
  if (trials_.empty()) replan();
}

void ModelBasedTuner::replan() {
  auto start = std::chrono::steady_clock::now();
  if (options_.diversity_filter_ratio && *options_.diversity_filter_ratio >= 1) {
    std::vector<int64_t> candidates =
        sa_.find_maximums(model_, options_.plan_size * *options_.diversity_filter_ratio, visited_);
    std::vector<std::vector<int64_t>> knobs;
    for (int64_t c : candidates) knobs.push_back(space_.point2knob(c));
    trials_.clear();
    for (size_t pos : diversity_pick(knobs, options_.plan_size)) {
      trials_.push_back(candidates[pos]);
    }
  } else {
    trials_ = sa_.find_maximums(model_, options_.plan_size, visited_);
  }
  trial_pt_ = 0;
  times_.plan_s += seconds_since(start);
}

std::vector<size_t> diversity_pick(const std::vector<std::vector<int64_t>>& candidate_knobs,
                                   int num) {
  std::vector<size_t> picked;
  if (candidate_knobs.empty()) return picked;
  const size_t n_knobs = candidate_knobs[0].size();
  std::vector<std::set<int64_t>> covered(n_knobs);
  std::vector<bool> taken(candidate_knobs.size(), false);
  const size_t n_pick = std::min(candidate_knobs.size(), static_cast<size_t>(std::max(num, 0)));
  for (size_t round = 0; round < n_pick; ++round) {
    size_t best = 0;
    int best_gain = -1;
    for (size_t x = 0; x < candidate_knobs.size(); ++x) {
      if (taken[x]) continue;
      int gain = 0;
      for (size_t i = 0; i < n_knobs; ++i) gain += covered[i].count(candidate_knobs[x][i]) ? 0 : 1;
      if (gain > best_gain) {
        best_gain = gain;
        best = x;
      }
    }
    taken[best] = true;
    picked.push_back(best);
    for (size_t i = 0; i < n_knobs; ++i) covered[i].insert(candidate_knobs[best][i]);
  }
  return picked;
}

}  // namespace kiln::tuner
