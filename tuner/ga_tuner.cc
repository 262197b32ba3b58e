#include "tuner/ga_tuner.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/random.h"
#include "tuner/space_walk.h"

namespace kiln::tuner {

namespace {

// Fruitless breeding draws tolerated per wanted child before falling back to random configs.
constexpr int kDrawsPerChild = 50;

}  // namespace

GaTuner::GaTuner(const ConfigSpace& space, GaOptions options, uint64_t seed)
    : Tuner(space), options_(options), rng_(seed) {
  options_.pop_size =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(options_.pop_size, space_.size())));
  options_.elite_num = std::min(options_.pop_size, std::max(0, options_.elite_num));
}

// The first generation is drawn when the first batch is asked for, after the configs measured
// by an earlier run have been marked visited.
void GaTuner::start_population() {
  started_ = true;
  genes_.clear();
  while (static_cast<int>(genes_.size()) < options_.pop_size) {
    int64_t index = random_index(space_, rng_, visited_);
    if (index < 0) break;
    visited_.insert(index);
    genes_.push_back(index);
  }
  trial_pt_ = 0;
}

std::vector<int64_t> GaTuner::next_batch(int n) {
  if (!started_) start_population();
  std::vector<int64_t> out;
  while (static_cast<int>(out.size()) < n) {
    if (trial_pt_ >= genes_.size()) {
      // The generation is proposed but not all measured yet: AutoTVM's tune loop never asks
      // then; a caller that does gets fresh random configs rather than nothing.
      int64_t index = random_index(space_, rng_, visited_);
      if (index < 0) break;
      visited_.insert(index);
      out.push_back(index);
      continue;
    }
    out.push_back(genes_[trial_pt_++]);
  }
  return out;
}

bool GaTuner::has_next() const {
  int64_t pending = static_cast<int64_t>(genes_.size() - std::min(trial_pt_, genes_.size()));
  return visited() - pending < space_.size();
}

bool GaTuner::can_propose_ahead(int64_t) const { return !started_ || trial_pt_ < genes_.size(); }

void GaTuner::update(const std::vector<int64_t>& indices, const std::vector<double>& flops) {
  for (size_t i = 0; i < indices.size(); ++i) {
    scores_[indices[i]] = std::isfinite(flops[i]) && flops[i] > 0 ? flops[i] : 0.0;
    visited_.insert(indices[i]);
  }
  if (!started_ || genes_.empty()) return;
  bool generation_measured =
      trial_pt_ >= genes_.size() &&
      std::all_of(genes_.begin(), genes_.end(), [&](int64_t g) { return scores_.count(g) > 0; });
  if (generation_measured && has_next()) breed();
}

void GaTuner::breed() {
  std::vector<int64_t> next;
  const int64_t unvisited = space_.size() - visited();
  if (unvisited <= options_.pop_size) {
    // No reason to breed: the next generation is everything left.
    for (int64_t i = 0; i < space_.range_length() && static_cast<int64_t>(next.size()) < unvisited;
         ++i) {
      if (space_.is_index_valid(i) && visited_.insert(i).second) next.push_back(i);
    }
  } else {
    std::vector<int64_t> parents = genes_;
    parents.insert(parents.end(), elites_.begin(), elites_.end());
    std::vector<double> scores;
    for (int64_t p : parents) scores.push_back(scores_[p]);
    // Elites: the best elite_num of this generation and the previous elites.
    std::vector<size_t> order(parents.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    elites_.clear();
    for (int e = 0; e < options_.elite_num && e < static_cast<int>(order.size()); ++e) {
      elites_.push_back(parents[order[e]]);
    }
    // Selection probability proportional to (score + 1e-8) / max.
    double max_score = 0;
    for (double& s : scores) max_score = std::max(max_score, s += 1e-8);
    std::vector<double> cumulative;
    double total = 0;
    for (double s : scores) cumulative.push_back(total += s / max_score);
    auto draw = [&](int64_t skip) {
      while (true) {
        double u = uniform_unit(rng_) * total;
        size_t k = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
        k = std::min(k, parents.size() - 1);
        if (static_cast<int64_t>(k) != skip || parents.size() == 1) return k;
      }
    };
    const std::vector<int64_t> dims = space_.dims();
    int draws_left = kDrawsPerChild * options_.pop_size;
    while (static_cast<int>(next.size()) < options_.pop_size && draws_left-- > 0) {
      size_t a = draw(-1), b = draw(static_cast<int64_t>(a));
      std::vector<int64_t> child = space_.point2knob(parents[a]);
      std::vector<int64_t> other = space_.point2knob(parents[b]);
      size_t point = uniform_below(rng_, dims.size());
      for (size_t j = point; j < dims.size(); ++j) child[j] = other[j];
      for (size_t j = 0; j < dims.size(); ++j) {
        if (uniform_unit(rng_) < options_.mutation_prob) {
          child[j] = static_cast<int64_t>(uniform_below(rng_, dims[j]));
        }
      }
      int64_t index = space_.knob2point(child);
      if (!space_.is_index_valid(index) || visited_.count(index)) continue;
      visited_.insert(index);
      next.push_back(index);
    }
    // A converged population breeds only known configs: fill up with random ones.
    while (static_cast<int>(next.size()) < options_.pop_size) {
      int64_t index = random_index(space_, rng_, visited_);
      if (index < 0) break;
      visited_.insert(index);
      next.push_back(index);
    }
  }
  genes_ = std::move(next);
  trial_pt_ = 0;
}

}  // namespace kiln::tuner
