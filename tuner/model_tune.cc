#include "tuner/model_tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>

#include "common/stopwatch.h"
#include "tuner/resume_rule.h"

namespace kiln::tuner {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

ModelTuneJob::ModelTuneJob(std::vector<ModelTask> tasks, Target target, ModelTuneOptions options)
    : tasks_(std::move(tasks)), target_(std::move(target)), options_(std::move(options)) {}

double ModelTuneJob::estimated_latency(const std::vector<ModelTaskState>& states,
                                       bool* complete) const {
  std::map<std::string, std::pair<double, double>> per_workload;  // workload -> weight, best
  for (size_t i = 0; i < tasks_.size(); ++i) {
    auto [it, fresh] = per_workload.try_emplace(tasks_[i].task.workload.to_string(),
                                                tasks_[i].weight, TaskScheduler::kUnknown);
    it->second.second = std::min(it->second.second, states[i].best_seconds);
  }
  double latency = 0;
  bool all = true;
  for (const auto& [workload, weight_best] : per_workload) {
    if (std::isfinite(weight_best.second)) {
      latency += weight_best.first * weight_best.second;
    } else {
      all = false;
    }
  }
  if (complete) *complete = all;
  return latency;
}

std::pair<int, int> ModelTuneJob::measured_workloads(
    const std::vector<ModelTaskState>& states) const {
  std::map<std::string, bool> measured;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    measured[tasks_[i].task.workload.to_string()] |= std::isfinite(states[i].best_seconds);
  }
  int n = 0;
  for (const auto& [workload, yes] : measured) n += yes ? 1 : 0;
  return {n, static_cast<int>(measured.size())};
}

Result<ModelTaskState> ModelTuneJob::initial_state(size_t i, store::Store& store) const {
  const TuneJobTask& task = tasks_[i].task;
  ModelTaskState state;
  ConfigSpace space = task.tmpl->space(task.workload);
  state.space = space.size();
  const ResumeRule rule{options_.job.loop.measure_options, options_.job.loop.retry_errors};
  // Only records comparable with a measurement made now (store::is_comparable): an older conv
  // record timed other work.
  store::RecordFilter filter =
      store::RecordFilter::of_task(Task{task.tmpl, task.workload, target_});
  filter.versions = store::Versions::kComparable;
  KILN_ASSIGN_OR_RETURN(std::vector<store::Record> records, store.records(filter));
  std::unordered_set<int64_t> done;
  for (const store::Record& r : records) {
    if (!space.is_index_valid(r.config_index)) continue;
    if (r.error_no == 0 && r.mean_cost() < state.best_seconds) {
      state.best_seconds = r.mean_cost();
      state.best_flops = r.flops();
    }
    if (rule.settles(r, /*found_at_start=*/true)) done.insert(r.config_index);
  }
  state.trials = static_cast<int64_t>(done.size());
  return state;
}

Result<ModelTuneResult> ModelTuneJob::run(builder::Builder& builder, runner::Runner& runner,
                                          store::Store& store, const ModelTuneEvents& events,
                                          std::stop_token stop) {
  auto start = Clock::now();
  double waited_s = 0;  // in before_round, waiting for the turn
  ModelTuneResult result;
  // Every round of this call is one run (store/run_times.h), unless the caller's is given.
  const std::string run_id =
      options_.job.loop.run_id.empty() ? unique_run_id() : options_.job.loop.run_id;
  std::vector<ModelTaskState>& states = result.tasks;
  std::vector<ScheduledTask> scheduled;
  auto cap = [&](size_t i) {
    int64_t c = states[i].space;
    if (options_.budget.trials_per_task) c = std::min(c, *options_.budget.trials_per_task);
    return c;
  };
  for (size_t i = 0; i < tasks_.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ModelTaskState s, initial_state(i, store));
    states.push_back(s);
    scheduled.push_back({tasks_[i].weight, tasks_[i].task.tmpl->flop(tasks_[i].task.workload),
                         std::string(tasks_[i].task.tmpl->name()),
                         tasks_[i].task.workload.to_string()});
  }
  TaskScheduler scheduler(scheduled, options_.scheduler);
  for (size_t i = 0; i < tasks_.size(); ++i) {
    states[i].alive = states[i].trials < cap(i);
    scheduler.set_initial(i, states[i].best_seconds, states[i].alive);
  }
  ModelTuneStatus& status = result.status;
  status.tasks = &states;
  // The trials the budget still allows: the total's rest, or what live tasks may still take
  // under the per-task budget (a task's space bounds it too).
  auto trials_left = [&](const ModelTuneStatus& st) -> std::optional<int64_t> {
    std::optional<int64_t> left;
    if (options_.budget.total_trials)
      left = std::max<int64_t>(0, *options_.budget.total_trials - st.trials);
    if (options_.budget.trials_per_task) {
      int64_t sum = 0;
      for (size_t i = 0; i < states.size(); ++i) {
        if (states[i].alive) sum += std::max<int64_t>(0, cap(i) - states[i].trials);
      }
      left = left ? std::min(*left, sum) : sum;
    }
    return left;
  };
  // Trials of the round in flight (status.fresh counts those of finished rounds).
  int64_t fresh_in_round = 0;
  auto eta = [&](const ModelTuneStatus& st) {
    double e = -1;
    const int64_t fresh = st.fresh + fresh_in_round;
    if (options_.budget.seconds) e = std::max(0.0, *options_.budget.seconds - st.elapsed_s);
    std::optional<int64_t> left = trials_left(st);
    if (left && fresh > 0 && st.elapsed_s > 0) {
      double by_trials = static_cast<double>(*left) * st.elapsed_s / static_cast<double>(fresh);
      e = e < 0 ? by_trials : std::min(e, by_trials);
    }
    return e;
  };
  auto refresh = [&](int current) {
    status.current = current;
    status.trials = 0;
    for (const ModelTaskState& s : states) status.trials += s.trials;
    status.elapsed_s = seconds_since(start) - waited_s;
    status.latency_s = estimated_latency(states, &status.latency_complete);
    std::tie(status.measured_workloads, status.workloads) = measured_workloads(states);
    status.eta_s = eta(status);
  };
  refresh(-1);
  status.start_latency_s = status.latency_s;
  status.start_latency_complete = status.latency_complete;
  auto out_of_time = [&] {
    return options_.budget.seconds && status.elapsed_s >= *options_.budget.seconds;
  };
  // A round between before_round and after_round; the wait for the turn is not time spent.
  class Turn {
   public:
    Turn(const ModelTuneEvents& events, double* waited_s) : events_(events) {
      if (!events_.before_round) return;
      auto asked = Clock::now();
      held_ = events_.before_round();
      *waited_s += seconds_since(asked);
    }
    ~Turn() {
      if (held_ && events_.after_round) events_.after_round();
    }
    bool held() const { return held_ || !events_.before_round; }

   private:
    const ModelTuneEvents& events_;
    bool held_ = false;
  };

  while (!stop.stop_requested()) {
    Turn turn(events, &waited_s);
    if (!turn.held() || stop.stop_requested()) break;
    refresh(-1);
    if (options_.budget.total_trials && status.trials >= *options_.budget.total_trials) break;
    if (out_of_time()) {
      result.out_of_time = true;
      break;
    }
    int i = scheduler.next();
    if (i < 0) break;
    // A task's first round, before it has any measurement, is small (the file comment of the
    // header says why).
    const bool first_round = states[i].rounds == 0 && !std::isfinite(states[i].best_seconds);
    const int round_size =
        first_round ? std::max(1, std::min(options_.first_round_trials, options_.round_trials))
                    : options_.round_trials;
    int64_t round = std::min<int64_t>(round_size, cap(i) - states[i].trials);
    if (options_.budget.total_trials) {
      round = std::min(round, *options_.budget.total_trials - status.trials);
    }
    int64_t before = states[i].trials;
    fresh_in_round = 0;
    TuneJobOptions job_options = options_.job;
    job_options.loop.n_trial = before + round;
    job_options.measure_fallback_first = true;
    job_options.loop.run_id = run_id;
    TuneJob job({tasks_[i].task}, target_, job_options);

    // The round stops after a batch when this run is stopped or its time is up.
    std::stop_source round_stop;
    std::stop_callback forward(stop, [&] { round_stop.request_stop(); });
    TuneJobEvents job_events;
    job_events.batch_committed = [&](size_t, const TuneProgress& p) {
      states[i].trials = p.done;
      if (p.best && p.best->mean_cost() < states[i].best_seconds) {
        states[i].best_seconds = p.best->mean_cost();
        states[i].best_flops = p.best->flops();
      }
      fresh_in_round = p.done - before;
      refresh(i);
      if (events.progress) events.progress(status);
      if (out_of_time()) round_stop.request_stop();
    };
    refresh(i);
    if (events.progress) events.progress(status);
    KILN_ASSIGN_OR_RETURN(TuneJobResult round_result,
                          job.run(builder, runner, store, job_events, round_stop.get_token()));
    states[i].rounds += 1;
    status.fresh += round_result.fresh;
    fresh_in_round = 0;
    bool stopped = round_result.interrupted;
    if (!round_result.tasks.empty()) {
      const TuneTaskOutcome& outcome = round_result.tasks.front();
      const TuneProgress& p = outcome.progress;
      states[i].trials = p.done;
      if (p.best && p.best->mean_cost() < states[i].best_seconds) {
        states[i].best_seconds = p.best->mean_cost();
        states[i].best_flops = p.best->flops();
      }
      // Dead: budget or space reached, nothing new measured, or the task stopped early.
      bool finished_early = !stopped && p.done < job_options.loop.n_trial;
      states[i].alive = !finished_early && p.done < cap(i) && p.done > before;
      if (stopped) states[i].alive = p.done < cap(i);
      if (events.round_finished) events.round_finished(outcome);
      result.rounds.push_back(outcome);
    } else {
      states[i].alive = false;
    }
    scheduler.round_done(i, states[i].best_seconds, states[i].alive);
    refresh(i);
    if (stopped) {
      if (out_of_time()) {
        result.out_of_time = true;
      } else {
        result.interrupted = true;
      }
      break;
    }
  }
  if (stop.stop_requested()) result.interrupted = true;
  refresh(-1);
  return result;
}

}  // namespace kiln::tuner
