#include "tuner/task_scheduler.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace kiln::tuner {

TaskScheduler::TaskScheduler(std::vector<ScheduledTask> tasks, SchedulerOptions options)
    : tasks_(std::move(tasks)), options_(options), state_(tasks_.size()) {}

void TaskScheduler::set_initial(size_t task, double best_latency, bool alive) {
  KILN_CHECK(task < state_.size());
  state_[task].best = best_latency;
  state_[task].alive = alive;
  // A task resumed with a measurement needs no warm-up round.
  state_[task].warmed_up = std::isfinite(best_latency);
}

void TaskScheduler::round_done(size_t task, double best_latency, bool alive) {
  KILN_CHECK(task < state_.size());
  State& s = state_[task];
  s.best = std::min(s.best, best_latency);
  s.alive = alive;
  s.warmed_up = true;
  s.history.push_back(s.best);
  last_ = task;
}

double TaskScheduler::best_alternative(size_t i) const {
  double best = kUnknown;
  if (tasks_[i].workload.empty()) return best;
  for (size_t j = 0; j < tasks_.size(); ++j) {
    if (j != i && tasks_[j].workload == tasks_[i].workload) best = std::min(best, state_[j].best);
  }
  return best;
}

double TaskScheduler::gradient(size_t i) const {
  const State& s = state_[i];
  if (!std::isfinite(s.best)) return -std::numeric_limits<double>::infinity();  // tune it first
  // What the workload costs with this task at latency g: no more than its other alternatives.
  const double other = best_alternative(i);
  auto effective = [&](double g) { return std::min(g, other); };
  double backward = 0;
  int window = options_.backward_window;
  if (static_cast<int>(s.history.size()) > window) {
    backward = (effective(s.history.back()) - effective(s.history[s.history.size() - 1 - window])) /
               window;
  }
  int rounds = std::max<int>(1, static_cast<int>(s.history.size()));
  double next_by_rounds = s.best - s.best / rounds;
  // The best throughput a similar task reached bounds what this one can hope for.
  double best_similar_flops = 0;
  for (size_t j = 0; j < tasks_.size(); ++j) {
    if (tasks_[j].group != tasks_[i].group || !std::isfinite(state_[j].best)) continue;
    if (state_[j].best > 0)
      best_similar_flops = std::max(best_similar_flops, tasks_[j].flop / state_[j].best);
  }
  double next = next_by_rounds;
  if (best_similar_flops > 0) {
    next = std::min(next, options_.beta * tasks_[i].flop / best_similar_flops);
  }
  double forward = effective(next) - effective(s.best);
  return tasks_[i].weight * (options_.alpha * backward + (1 - options_.alpha) * forward);
}

int TaskScheduler::next() const {
  size_t n = state_.size();
  // Warm-up (and round-robin): the next live task in order after the last one tuned.
  bool round_robin = options_.strategy == SchedulerStrategy::kRoundRobin;
  for (size_t k = 1; k <= n; ++k) {
    size_t i = (last_ + k) % n;
    if (state_[i].alive && (round_robin || !state_[i].warmed_up)) return static_cast<int>(i);
  }
  if (round_robin) return -1;
  int best = -1;
  double best_gradient = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!state_[i].alive) continue;
    double g = gradient(i);
    if (best < 0 || g < best_gradient) {
      best = static_cast<int>(i);
      best_gradient = g;
    }
  }
  return best;
}

double TaskScheduler::objective(bool* complete) const {
  double f = 0;
  bool all = true;
  for (size_t i = 0; i < state_.size(); ++i) {
    // A workload counts once, at its first task (in index order) among its alternatives.
    bool counted_before = false;
    for (size_t j = 0; j < i && !tasks_[i].workload.empty(); ++j) {
      counted_before = counted_before || tasks_[j].workload == tasks_[i].workload;
    }
    if (counted_before) continue;
    double best = std::min(state_[i].best, best_alternative(i));
    if (std::isfinite(best)) {
      f += tasks_[i].weight * best;
    } else {
      all = false;
    }
  }
  if (complete) *complete = all;
  return f;
}

}  // namespace kiln::tuner
