#include "tuner/tune_loop.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <random>
#include <unordered_set>

#include "common/stopwatch.h"
#include "tuner/resume_rule.h"

namespace kiln::tuner {

namespace {

using Clock = std::chrono::steady_clock;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string unique_run_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device entropy;
  uint64_t nonce = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  char id[64];
  std::snprintf(id, sizeof id, "%llx", static_cast<unsigned long long>(nonce));
  return std::string(host) + "/" + std::to_string(getpid()) + "/" + id;
}

namespace {

store::Record make_record(const MeasureInput& input, const MeasureResult& m, double flop,
                          const TuneOptions& options) {
  store::Record r;
  r.target = input.task.target.to_string();
  r.task_name = std::string(input.task.tmpl->name());
  r.workload = input.task.workload.to_string();
  r.config_index = input.config.index();
  r.entities = input.config.to_json()["entity"];
  r.error_no = static_cast<int>(m.error);
  if (m.error == MeasureError::kNoError) r.costs = m.costs;
  r.all_cost = m.build_seconds + m.run_seconds;
  r.timestamp = m.timestamp;
  r.error_msg = m.message;
  r.flop = flop;
  r.source = options.source;
  r.measure_options = options.measure_options;
  r.runner_lost = m.error == MeasureError::kRuntimeDevice && m.runner_lost;
  return r;
}

}  // namespace

Result<TuneProgress> tune_task(const ops::Template& tmpl, const ops::Workload& workload,
                               const Target& target, const ConfigSpace& space, Tuner& tuner,
                               builder::Builder& builder, runner::Runner& runner,
                               store::Store& store, const TuneOptions& options,
                               const std::function<void(const TuneProgress&)>& on_batch) {
  auto start = Clock::now();
  TuneProgress p;
  p.total = std::min<int64_t>(options.n_trial, space.size());
  double flop = tmpl.flop(workload);
  const Task this_task{&tmpl, workload, target};
  const store::TaskKey task = store::TaskKey::of(this_task);
  const ResumeRule rule{options.measure_options, options.retry_errors};
  const std::string owner = options.lease_owner.empty() ? unique_run_id() : options.lease_owner;
  auto now = [&] { return options.clock ? options.clock() : unix_now(); };

  // The run's times for this task, added to the store with each batch (in the batch's own
  // transaction): what was spent since the previous addition, so that rounds of one run (each a
  // call) sum up and a killed run's row holds exactly its committed batches.
  store::RunTimes added;  // what this call has added so far
  added.run = options.run_id.empty() ? owner : options.run_id;
  added.target = task.target;
  added.task_name = task.task_name;
  added.workload = task.workload;
  added.source = options.source;
  added.started = unix_now();
  const std::optional<double> cooldown_at_start = runner.cooldown_seconds();
  if (cooldown_at_start) added.cooldown_s = 0;
  // What was spent since the last addition, with `trials` new records of which `errors` failed.
  auto times_since_added = [&](int64_t trials, int64_t errors) {
    store::RunTimes delta = added;
    delta.updated = unix_now();
    delta.trials = trials;
    delta.errors = errors;
    delta.build_s = std::max(0.0, p.times.build_s - added.build_s);
    delta.run_s = std::max(0.0, p.times.run_s - added.run_s);
    delta.store_s = std::max(0.0, p.times.store_s - added.store_s);
    delta.wall_s = std::max(0.0, seconds_since(start) - added.wall_s);
    std::optional<double> cooldown = runner.cooldown_seconds();
    if (cooldown && cooldown_at_start) {
      delta.cooldown_s =
          std::max(0.0, *cooldown - *cooldown_at_start - added.cooldown_s.value_or(0));
    } else {
      delta.cooldown_s.reset();
    }
    return delta;
  };

  // What the store holds for the task, as far as this run has looked.
  std::unordered_set<int64_t> done;             // configs settled (resume_rule.h)
  std::unordered_set<int64_t> failed_at_start;  // configs with records at start, not settled
  int64_t last_seen_id = 0;                     // the task's records up to here were absorbed
  int64_t best_age_origin = 0;                  // trial number of the best, for early stopping
  // Takes the task's records (in id order) into the run's state; configs they settle count as
  // trials and are fed to the tuner as visited with their throughput.
  auto absorb = [&](const std::vector<store::Record>& records, bool found_at_start) {
    std::vector<int64_t> indices;
    std::vector<double> flops;
    for (const store::Record& r : records) {
      last_seen_id = std::max(last_seen_id, r.id);
      if (!space.is_index_valid(r.config_index)) continue;
      // Another program was timed (an older measurement version): never compared with new ones.
      if (!store::is_comparable(r)) continue;
      double f = r.flops();
      if (f > p.best_flops) {
        p.best_flops = f;
        p.best = r;
        best_age_origin = p.done + 1;
      }
      if (!rule.settles(r, found_at_start)) {
        if (!done.count(r.config_index)) failed_at_start.insert(r.config_index);
        continue;
      }
      // The same config may be recorded twice (e.g. imported logs); it is one trial.
      if (!done.insert(r.config_index).second) continue;
      failed_at_start.erase(r.config_index);
      ++p.done;
      tuner.mark_visited(r.config_index);
      indices.push_back(r.config_index);
      flops.push_back(f);
    }
    if (!indices.empty()) tuner.update(indices, flops);
    return static_cast<int64_t>(indices.size());
  };

  // Resume: replay what the store already holds for this task.
  store::RecordFilter filter = store::RecordFilter::of_task(this_task);
  filter.versions = store::Versions::kOutdated;
  KILN_ASSIGN_OR_RETURN(p.outdated, store.count(filter));
  filter.versions = store::Versions::kComparable;
  KILN_ASSIGN_OR_RETURN(std::vector<store::Record> history, store.records(filter));
  absorb(history, /*found_at_start=*/true);
  p.resumed = p.done;

  int batch_size = options.batch_size > 0 ? options.batch_size : builder.n_parallel();
  auto stop_early = [&] {
    return options.early_stopping && p.done >= best_age_origin + *options.early_stopping;
  };
  bool first_config_proposed = false;
  // Batches handed to the builder and not counted yet, oldest first, and their configs.
  std::deque<std::vector<MeasureInput>> started;
  int64_t pending = 0;
  auto configs_of = [](const std::vector<MeasureInput>& inputs) {
    std::vector<int64_t> indices;
    for (const MeasureInput& input : inputs) indices.push_back(input.config.index());
    return indices;
  };
  // Proposes, claims and starts the next batch: up to batch_size configs of what is left once
  // the pending trials count. False when there is nothing left to propose.
  auto start_next = [&]() -> Result<bool> {
    while (true) {
      int64_t left = p.total - p.done - pending;
      if (left <= 0 || !tuner.has_next() || stop_early()) return false;
      std::vector<int64_t> proposed;
      if (options.first_config && !first_config_proposed) {
        first_config_proposed = true;
        if (space.is_index_valid(*options.first_config) && !done.count(*options.first_config)) {
          proposed.push_back(*options.first_config);
          tuner.mark_visited(*options.first_config);
        }
      }
      int64_t wanted = std::min<int64_t>(batch_size, left) - static_cast<int64_t>(proposed.size());
      if (wanted > 0) {
        for (int64_t index : tuner.next_batch(static_cast<int>(wanted))) proposed.push_back(index);
      }
      if (proposed.empty()) return false;
      double claimed_at = now();
      KILN_ASSIGN_OR_RETURN(store::Claim claim,
                            store.claim(task, proposed, last_seen_id, owner, claimed_at,
                                        claimed_at + options.lease_s));
      // Others' trials since the last look count now, before deciding what is still wanted.
      p.concurrent += absorb(claim.unseen, /*found_at_start=*/false);
      left = p.total - p.done - pending;
      std::vector<int64_t> unwanted;
      std::vector<MeasureInput> inputs;
      for (int64_t index : claim.claimed) {
        if (done.count(index) || static_cast<int64_t>(inputs.size()) >= left) {
          unwanted.push_back(index);
        } else {
          inputs.push_back({this_task, space.get(index)});
        }
      }
      KILN_RETURN_IF_ERROR(store.release_leases(task, unwanted, owner));
      // Configs not claimed are another tuner's: visited for this tuner, never measured here.
      if (inputs.empty()) continue;
      builder.start(inputs);
      pending += static_cast<int64_t>(inputs.size());
      started.push_back(std::move(inputs));
      return true;
    }
  };
  auto abandon_started = [&] {  // built ahead but not wanted: never measured, never recorded
    std::vector<int64_t> unmeasured;
    for (; !started.empty(); started.pop_front()) {
      builder.finish();
      for (int64_t index : configs_of(started.front())) unmeasured.push_back(index);
    }
    pending = 0;
    // Best effort: a lease that cannot be released now expires by itself.
    (void)store.release_leases(task, unmeasured, owner);
  };
  auto fail = [&](const Status& s) {
    abandon_started();
    return s;
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
  Result<bool> first = start_next();
  if (!first.ok()) return fail(first.status());
  if (*first) runner.prepare(started.front().front());
  while (!started.empty()) {
    auto phase = Clock::now();
    std::vector<BuildResult> builds = builder.finish();
    p.times.build_s += seconds_since(phase);
    std::vector<MeasureInput> inputs = std::move(started.front());
    started.pop_front();
    if (options.pipeline) {
      while (static_cast<int>(started.size()) < options.build_ahead &&
             tuner.can_propose_ahead(pending)) {
        Result<bool> more = start_next();
        if (!more.ok()) {
          (void)store.release_leases(task, configs_of(inputs), owner);
          return fail(more.status());
        }
        if (!*more) break;
      }
    }
    // The batch about to run and those built ahead stay ours for another lease period.
    phase = Clock::now();
    Status renewed = store.renew_leases(owner, now() + options.lease_s);
    p.times.store_s += seconds_since(phase);
    if (!renewed.ok()) {
      (void)store.release_leases(task, configs_of(inputs), owner);
      return fail(renewed);
    }
    phase = Clock::now();
    std::vector<MeasureResult> results = runner.run(inputs, builds);
    p.times.run_s += seconds_since(phase);

    std::vector<store::Record> records;
    for (size_t i = 0; i < inputs.size(); ++i) {
      records.push_back(make_record(inputs[i], results[i], flop, options));
    }
    int64_t batch_errors = 0;
    for (const store::Record& r : records) batch_errors += r.error_no != 0 ? 1 : 0;
    const store::RunTimes times =
        times_since_added(static_cast<int64_t>(records.size()), batch_errors);
    phase = Clock::now();
    // Also releases their leases and adds the run's times, in the same transaction.
    Status committed = store.append(records, owner, &times);
    p.times.store_s += seconds_since(phase);
    if (!committed.ok()) {
      return fail(Status::Error(committed.code(), "cannot commit measurements to " + store.path() +
                                                      ": " + committed.message()));
    }
    added.add(times);

    // Committed: now they count.
    std::vector<int64_t> batch;
    std::vector<double> batch_flops;
    p.current_flops = 0;
    for (const store::Record& r : records) {
      --pending;
      double f = r.flops();
      p.current_flops = std::max(p.current_flops, f);
      if (r.error_no != 0) {
        ++p.errors;
        ++p.consecutive_errors;
      } else {
        p.consecutive_errors = 0;
      }
      if (failed_at_start.erase(r.config_index)) ++p.retried;
      // Claimed, so no other tuner recorded it meanwhile; done.insert can only fail if the
      // lease expired under a slow batch and another tuner measured the config too.
      if (!done.insert(r.config_index).second) continue;
      ++p.done;
      batch.push_back(r.config_index);
      batch_flops.push_back(f);
      if (f > p.best_flops) {
        p.best_flops = f;
        p.best = r;
        best_age_origin = p.done;
      }
    }
    tuner.update(batch, batch_flops);
    p.times.wall_s = seconds_since(start);
    if (on_batch) on_batch(p);

    if (options.stop.stop_requested()) {
      abandon_started();
      p.interrupted = true;
    } else if (stop_early()) {
      abandon_started();
    } else if (started.empty()) {
      Result<bool> next = start_next();
      if (!next.ok()) return fail(next.status());
    }
  }
  p.times.wall_s = seconds_since(start);
  // The time after the last batch (abandoning batches built ahead); nothing to add to a run
  // that measured nothing.
  if (added.trials > 0) KILN_RETURN_IF_ERROR(store.add_run_times(times_since_added(0, 0)));
  return p;
}

}  // namespace kiln::tuner
