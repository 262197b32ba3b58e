#include "tuner/sa_optimizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/random.h"
#include "tuner/space_walk.h"

namespace kiln::tuner {

namespace {

// The top-`num` set of (score, index): a min-heap plus membership, as AutoTVM's heapq + in_heap.
class TopSet {
 public:
  TopSet(int num, const std::unordered_set<int64_t>& exclude) : exclude_(exclude) {
    // Placeholders (-inf, -1 - i) fill the heap so that the minimum is always defined.
    for (int i = 0; i < num; ++i) {
      heap_.push_back({-std::numeric_limits<double>::infinity(), -1 - i});
      members_.insert(-1 - i);
    }
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  }

  // Inserts (score, index) if it beats the minimum and is neither excluded nor present.
  bool offer(double score, int64_t index) {
    if (heap_.empty() || !(score > heap_.front().first)) return false;
    if (exclude_.count(index) || members_.count(index)) return false;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    members_.erase(heap_.back().second);
    heap_.back() = {score, index};
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    members_.insert(index);
    return true;
  }

  // Best first, scores below 0 (and the placeholders) dropped.
  std::vector<int64_t> best_first() const {
    std::vector<std::pair<double, int64_t>> items = heap_;
    std::sort(items.begin(), items.end(), std::greater<>());
    std::vector<int64_t> out;
    for (const auto& [score, index] : items) {
      if (score >= 0) out.push_back(index);
    }
    return out;
  }

 private:
  const std::unordered_set<int64_t>& exclude_;
  std::vector<std::pair<double, int64_t>> heap_;
  std::unordered_set<int64_t> members_;
};

}  // namespace

SimulatedAnnealingOptimizer::SimulatedAnnealingOptimizer(const ConfigSpace& space,
                                                         SaOptions options, uint64_t seed)
    : space_(space), options_(options), rng_(seed) {}

std::vector<int64_t> SimulatedAnnealingOptimizer::find_maximums(
    costmodel::CostModel& model, int num, const std::unordered_set<int64_t>& exclude) {
  last_iterations_ = 0;
  if (num <= 0 || space_.size() == 0) return {};
  if (!options_.persistent || points_.empty()) {
    points_ = sample_ints(space_, std::min<int64_t>(options_.parallel_size, space_.size()), rng_);
  }
  std::vector<int64_t>& points = points_;
  std::vector<float> scores = model.predict(points);

  TopSet top(num, exclude);
  for (size_t i = 0; i < points.size(); ++i) top.offer(scores[i], points[i]);

  double t = options_.temp_start;
  const double cool = (options_.temp_start - options_.temp_end) / (options_.n_iter + 1);
  int k = 0, k_last_modify = 0;
  std::vector<int64_t> proposals(points.size());
  while (k < options_.n_iter && k < k_last_modify + options_.early_stop) {
    for (size_t i = 0; i < points.size(); ++i) proposals[i] = random_walk(space_, points[i], rng_);
    std::vector<float> new_scores = model.predict(proposals);
    for (size_t i = 0; i < points.size(); ++i) {
      double delta = static_cast<double>(new_scores[i]) - scores[i];
      // NaN scores (a broken model) never win a move.
      double accept = std::exp(std::min(delta / (t + 1e-5), 1.0));
      if (uniform_unit(rng_) < accept) {
        points[i] = proposals[i];
        scores[i] = new_scores[i];
      }
    }
    for (size_t i = 0; i < proposals.size(); ++i) {
      if (top.offer(new_scores[i], proposals[i])) k_last_modify = k;
    }
    ++k;
    t -= cool;
  }
  last_iterations_ = k;
  return top.best_first();
}

}  // namespace kiln::tuner
