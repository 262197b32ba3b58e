#include "tuner/tune_loop.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <unordered_set>

namespace kiln::tuner {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

store::Record make_record(const builder::MeasureInput& input, const runner::MeasureResult& m,
                          double flop, const std::string& source) {
  store::Record r;
  r.target = input.target.to_string();
  r.task_name = std::string(input.tmpl->name());
  r.workload = input.workload.to_string();
  r.config_index = input.config.index();
  r.entities = input.config.to_json()["entity"];
  r.error_no = static_cast<int>(m.error);
  if (m.error == MeasureError::kNoError) r.costs = m.costs;
  r.all_cost = m.build_seconds + m.run_seconds;
  r.timestamp = m.timestamp;
  r.error_msg = m.message;
  r.flop = flop;
  r.source = source;
  return r;
}

}  // namespace

Result<TuneProgress> tune_task(const ops::Template& tmpl, const ops::Workload& workload,
                               const builder::Target& target, const ConfigSpace& space,
                               Tuner& tuner, builder::Builder& builder, runner::Runner& runner,
                               store::RecordStore& store, const TuneOptions& options,
                               const std::function<void(const TuneProgress&)>& on_batch) {
  auto start = Clock::now();
  TuneProgress p;
  p.total = std::min<int64_t>(options.n_trial, space.size());
  double flop = tmpl.flop(workload);

  // Resume: replay what the store already holds for this task.
  store::RecordFilter filter;
  filter.target = target.to_string();
  filter.task_name = std::string(tmpl.name());
  filter.workload = workload.to_string();
  KILN_ASSIGN_OR_RETURN(std::vector<store::Record> history, store.records(filter));
  std::vector<int64_t> indices;
  std::vector<double> flops;
  std::unordered_set<int64_t> seen;
  int64_t best_age_origin = 0;  // trial number of the best, for early stopping
  for (const store::Record& r : history) {
    // The same config may be recorded twice (e.g. imported logs); it is one trial.
    if (!space.is_index_valid(r.config_index) || !seen.insert(r.config_index).second) continue;
    tuner.mark_visited(r.config_index);
    indices.push_back(r.config_index);
    flops.push_back(r.flops());
    if (flops.back() > p.best_flops) {
      p.best_flops = flops.back();
      p.best = r;
      best_age_origin = static_cast<int64_t>(indices.size());
    }
  }
  if (!indices.empty()) tuner.update(indices, flops);
  p.resumed = p.done = static_cast<int64_t>(indices.size());

  int batch_size = options.batch_size > 0 ? options.batch_size : builder.n_parallel();
  auto stop_early = [&] {
    return options.early_stopping && p.done >= best_age_origin + *options.early_stopping;
  };
  // Batches handed to the builder and not counted yet, oldest first, and their configs.
  std::deque<std::vector<builder::MeasureInput>> started;
  int64_t pending = 0;
  // Proposes and starts the next batch: up to batch_size configs of what is left once the
  // pending trials count. False when there is nothing left to propose.
  auto start_next = [&] {
    int64_t left = p.total - p.done - pending;
    if (left <= 0 || !tuner.has_next() || stop_early()) return false;
    std::vector<builder::MeasureInput> inputs;
    for (int64_t index : tuner.next_batch(static_cast<int>(std::min<int64_t>(batch_size, left)))) {
      inputs.push_back({&tmpl, workload, space.get(index), target});
    }
    if (inputs.empty()) return false;
    builder.start(inputs);
    pending += static_cast<int64_t>(inputs.size());
    started.push_back(std::move(inputs));
    return true;
  };
  auto abandon_started = [&] {  // built ahead but not wanted: never measured, never recorded
    for (; !started.empty(); started.pop_front()) builder.finish();
    pending = 0;
  };
  // Pipelining: whenever the tuner can propose without the pending results, later batches
  // build while this one is measured; the builders are stopped whenever a kernel runs, so they
  // only use the runner's cooldowns and the loop's own pauses.
  if (options.pipeline) {
    runner::Runner::Hooks hooks;
    hooks.before_kernel = [&] { builder.pause(); };
    hooks.after_kernel = [&] { builder.resume(); };
    hooks.idle = [&](double seconds) { builder.work_for(seconds); };
    runner.set_hooks(std::move(hooks));
  }
  struct ClearHooks {
    runner::Runner& runner;
    ~ClearHooks() { runner.set_hooks({}); }
  } clear_hooks{runner};

  // The runner computes the task's reference while the first batch builds.
  if (start_next()) runner.prepare(started.front().front());
  while (!started.empty()) {
    auto phase = Clock::now();
    std::vector<builder::BuildResult> builds = builder.finish();
    p.times.build_s += seconds_since(phase);
    std::vector<builder::MeasureInput> inputs = std::move(started.front());
    started.pop_front();
    if (options.pipeline) {
      while (static_cast<int>(started.size()) < options.build_ahead &&
             tuner.can_propose_ahead(pending) && start_next()) {
      }
    }
    phase = Clock::now();
    std::vector<runner::MeasureResult> results = runner.run(inputs, builds);
    p.times.run_s += seconds_since(phase);

    std::vector<store::Record> records;
    for (size_t i = 0; i < inputs.size(); ++i) {
      records.push_back(make_record(inputs[i], results[i], flop, options.source));
    }
    phase = Clock::now();
    Status committed = store.append(records);
    p.times.store_s += seconds_since(phase);
    if (!committed.ok()) {
      abandon_started();
      return Status::Error(committed.code(), "cannot commit measurements to " + store.path() +
                                                 ": " + committed.message());
    }

    // Committed: now they count.
    std::vector<int64_t> batch;
    std::vector<double> batch_flops;
    p.current_flops = 0;
    for (const store::Record& r : records) {
      ++p.done;
      --pending;
      batch.push_back(r.config_index);
      double f = r.flops();
      batch_flops.push_back(f);
      p.current_flops = std::max(p.current_flops, f);
      if (r.error_no != 0) {
        ++p.errors;
        ++p.consecutive_errors;
      } else {
        p.consecutive_errors = 0;
      }
      if (f > p.best_flops) {
        p.best_flops = f;
        p.best = r;
        best_age_origin = p.done;
      }
    }
    tuner.update(batch, batch_flops);
    p.times.wall_s = seconds_since(start);
    if (on_batch) on_batch(p);

    if (options.stop_requested && options.stop_requested()) {
      abandon_started();
      p.interrupted = true;
    } else if (stop_early()) {
      abandon_started();
    } else if (started.empty()) {
      start_next();
    }
  }
  p.times.wall_s = seconds_since(start);
  return p;
}

}  // namespace kiln::tuner
