// Which task of a model to tune next (reference/autotvm.md §11).
//
// AutoTVM tunes a model's tasks one after the other with the same budget each. Ansor's
// TaskScheduler spends each round where the estimated end-to-end latency f = Σ w_i · g_i drops
// most (w_i: how often task i occurs; g_i: its best latency so far):
//   - warm-up: one round per task, in order;
//   - then the live task with the most negative gradient
//       grad_i = w_i · (α · backward_i + (1 − α) · forward_i)
//       backward_i = (g_i(now) − g_i(window rounds ago)) / window   (0 before `window` rounds)
//       forward_i  = min(g_i − g_i / t_i, β · flop_i / best FLOPS among similar tasks) − g_i
//     with t_i the task's rounds so far and "similar" = same template; ties go to the lowest
//     index (deterministic, where Ansor draws at random).
// Alternatives (tasks of one workload under different templates: dense_pack and dense_nopack,
// a direct and a Winograd conv) compute the same layer, and the model runs the fastest: f counts
// a workload once, at its best alternative, and a task's gain is only what takes the workload
// below its other alternatives (g_i above is read as min(g_i, best of the others)).
// A dead task (its space exhausted, its budget reached, or a round that measured nothing new)
// is never chosen again. Round-robin (AutoTVM's order, one round per task in turn) is the other
// strategy. The scheduler only decides; the caller runs the rounds and reports back.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kiln::tuner {

enum class SchedulerStrategy { kGradient, kRoundRobin };

struct ScheduledTask {
  double weight = 1;     // occurrences in the model
  double flop = 0;       // per occurrence
  std::string group;     // similar tasks share a group (the template name)
  std::string workload;  // alternatives share it (non-empty); empty: the task stands alone
};

struct SchedulerOptions {
  SchedulerStrategy strategy = SchedulerStrategy::kGradient;
  double alpha = 0.2;
  double beta = 2;
  int backward_window = 3;
};

class TaskScheduler {
 public:
  static constexpr double kUnknown = std::numeric_limits<double>::infinity();

  TaskScheduler(std::vector<ScheduledTask> tasks, SchedulerOptions options = {});

  // The task's state before any round (e.g. resumed from the store): best latency in seconds
  // (kUnknown when nothing succeeded) and whether it can still be tuned.
  void set_initial(size_t task, double best_latency, bool alive);
  // After a round of `task`: its best latency now and whether it can still be tuned.
  void round_done(size_t task, double best_latency, bool alive);

  // The task to tune next; -1 when every task is dead.
  int next() const;

  // Σ weight · best latency over workloads with a measurement (at their best alternative);
  // `complete` is false when some workload has none yet.
  double objective(bool* complete = nullptr) const;
  int rounds(size_t task) const { return static_cast<int>(state_[task].history.size()); }
  bool alive(size_t task) const { return state_[task].alive; }

 private:
  struct State {
    double best = kUnknown;
    bool alive = true;
    bool warmed_up = false;
    std::vector<double> history;  // best latency after each round
  };
  double gradient(size_t task) const;
  // The best latency of the task's alternatives other than itself (kUnknown: none measured).
  double best_alternative(size_t task) const;

  std::vector<ScheduledTask> tasks_;
  SchedulerOptions options_;
  std::vector<State> state_;
  size_t last_ = static_cast<size_t>(-1);  // round-robin position
};

}  // namespace kiln::tuner
