// Tuning a whole model: its tasks under one budget, a round at a time, each round given to the
// task the scheduler (tuner/task_scheduler.h) picks. A round is a TuneJob of one task whose
// trial target is the task's trials so far plus the round size, so every round resumes from the
// store exactly as `kiln tune` does (and measures the task's fallback config first, so that the
// store's best for a task is never worse than compiling without it): a run killed at any moment and
// started again loses nothing and measures nothing twice, and budgets count what the store holds.
// A task's first round is small (first_round_trials: its fallback config, then a few trials), so
// that every task has a measurement, and the estimate covers the whole model, within the first
// minutes of a short budget; the scheduler's warm-up gives every task that round before any
// task gets a second. Later rounds are round_trials (AutoTVM's plan size) each.
//
// Budgets (any combination; the first reached ends the job):
//   total_trials      trials of all tasks together, records already in the store included
//   trials_per_task   per task (a task that reaches it is done)
//   seconds           wall clock of this run; the batch being measured when it runs out is
//                     finished and committed, then the job stops
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <utility>
#include <vector>

#include "tuner/task_scheduler.h"
#include "tuner/tune_job.h"

namespace kiln::tuner {

struct ModelTask {
  TuneJobTask task;
  double weight = 1;  // occurrences in the model
};

struct ModelBudget {
  std::optional<int64_t> total_trials;
  std::optional<int64_t> trials_per_task;
  std::optional<double> seconds;
};

struct ModelTuneOptions {
  TuneJobOptions job;  // job.loop.n_trial is set per round; its early_stopping applies per task
  SchedulerOptions scheduler;
  ModelBudget budget;
  int round_trials = 64;  // Ansor's num_measures_per_round; capped by the budget per task
  // A task's first round (when it has no measurement yet), capped by round_trials.
  int first_round_trials = 8;
};

struct ModelTaskState {
  int64_t trials = 0;  // settled configs in the store (resume_rule.h)
  int64_t space = 0;   // size of the task's config space
  double best_seconds = TaskScheduler::kUnknown;
  double best_flops = 0;
  bool alive = true;
  int rounds = 0;  // rounds run by this job
};

struct ModelTuneStatus {
  const std::vector<ModelTaskState>* tasks = nullptr;
  int current = -1;    // the task being tuned
  int64_t trials = 0;  // Σ trials
  int64_t fresh = 0;   // trials measured by this run
  double elapsed_s = 0;
  double latency_s = 0;           // estimated end-to-end latency now (see objective)
  bool latency_complete = false;  // every workload has a measurement
  double start_latency_s = 0;
  bool start_latency_complete = false;
  int measured_workloads = 0;  // workloads (layers) with a measurement, of
  int workloads = 0;           // the model's workloads: the estimate sums only the measured ones
  // Seconds until the first budget ends, from the time budget or from the trials left at this
  // run's rate so far; negative while unknown (no budget, or nothing measured yet).
  double eta_s = -1;
};

struct ModelTuneResult {
  std::vector<ModelTaskState> tasks;
  std::vector<TuneTaskOutcome> rounds;  // every round, in order
  ModelTuneStatus status;
  bool interrupted = false;  // stopped by the stop token (not by the budget)
  bool out_of_time = false;
};

struct ModelTuneEvents {
  std::function<void(const ModelTuneStatus&)> progress;  // after every committed batch
  std::function<void(const TuneTaskOutcome&)> round_finished;
  // Around every round (the daemon's jobs take turns on the machine: daemon/measure_gate.h).
  // before_round may block; the time it blocks is not time spent (elapsed_s, the time budget).
  // It returns false when the run is stopped while waiting (no round, after_round not called).
  std::function<bool()> before_round;
  std::function<void()> after_round;
};

class ModelTuneJob {
 public:
  ModelTuneJob(std::vector<ModelTask> tasks, Target target, ModelTuneOptions options);

  Result<ModelTuneResult> run(builder::Builder& builder, runner::Runner& runner,
                              store::Store& store, const ModelTuneEvents& events = {},
                              std::stop_token stop = {});

  const std::vector<ModelTask>& tasks() const { return tasks_; }

  // The estimated end-to-end latency: for each workload, its weight times the best latency of
  // any of its templates (a dense node is one layer whichever template wins).
  double estimated_latency(const std::vector<ModelTaskState>& states, bool* complete) const;
  // How many workloads have a measurement, of how many (estimated_latency's terms).
  std::pair<int, int> measured_workloads(const std::vector<ModelTaskState>& states) const;

 private:
  Result<ModelTaskState> initial_state(size_t i, store::Store& store) const;

  std::vector<ModelTask> tasks_;
  Target target_;
  ModelTuneOptions options_;
};

}  // namespace kiln::tuner
