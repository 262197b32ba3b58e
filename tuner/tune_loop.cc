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
  r.measure_options = m.emulated ? store::emulated_measure_options(options.measure_options)
                                 : options.measure_options;
  r.runner_lost = m.error == MeasureError::kRuntimeDevice && m.runner_lost;
  return r;
}

// One call of tune_task: the loop's state, and one method per step of a batch. The steps run
// in this order: resume (once), then start_next and, per started batch, finish_build,
// build_ahead, measure, commit, count and decide_next; their side effects on the store, the
// tuner, the builder and the runner are those of the loop as documented in tune_loop.h.
class TaskTuning {
 public:
  TaskTuning(const ops::Template& tmpl, const ops::Workload& workload, const Target& target,
             const ConfigSpace& space, Tuner& tuner, builder::Builder& builder,
             runner::Runner& runner, store::Store& store, const TuneOptions& options,
             const std::function<void(const TuneProgress&)>& on_batch)
      : space_(space),
        tuner_(tuner),
        builder_(builder),
        runner_(runner),
        store_(store),
        options_(options),
        on_batch_(on_batch),
        start_(Clock::now()),
        flop_(tmpl.flop(workload)),
        this_task_{&tmpl, workload, target},
        task_(store::TaskKey::of(this_task_)),
        rule_{options.measure_options, options.retry_errors},
        owner_(options.lease_owner.empty() ? unique_run_id() : options.lease_owner) {
    p_.total = std::min<int64_t>(options.n_trial, space.size());
    // The run's times for this task, added to the store with each batch (in the batch's own
    // transaction): what was spent since the previous addition, so that rounds of one run (each
    // a call) sum up and a killed run's row holds exactly its committed batches.
    added_.run = options.run_id.empty() ? owner_ : options.run_id;
    added_.target = task_.target;
    added_.task_name = task_.task_name;
    added_.workload = task_.workload;
    added_.source = options.source;
    added_.started = unix_now();
    cooldown_at_start_ = runner.cooldown_seconds();
    if (cooldown_at_start_) added_.cooldown_s = 0;
  }

  // The whole loop: resume, then batches until the budget, the tuner, early stopping or a stop
  // request ends it; then the time after the last batch. Fails when the store fails, with the
  // batches started ahead abandoned.
  Result<TuneProgress> run() {
    KILN_RETURN_IF_ERROR(resume());
    batch_size_ = options_.batch_size > 0 ? options_.batch_size : builder_.n_parallel();
    install_pipeline_hooks();
    struct ClearHooks {
      runner::Runner& runner;
      ~ClearHooks() { runner.set_hooks({}); }
    } clear_hooks{runner_};

    // The runner computes the task's reference while the first batch builds.
    Result<bool> first = start_next();
    if (!first.ok()) return fail(first.status());
    if (*first) runner_.prepare(started_.front().front());
    while (!started_.empty()) {
      std::vector<BuildResult> builds = finish_build();
      std::vector<MeasureInput> inputs = std::move(started_.front());
      started_.pop_front();
      KILN_RETURN_IF_ERROR(build_ahead(inputs));
      KILN_ASSIGN_OR_RETURN(std::vector<MeasureResult> results, measure(inputs, builds));
      std::vector<store::Record> records;
      for (size_t i = 0; i < inputs.size(); ++i) {
        records.push_back(make_record(inputs[i], results[i], flop_, options_));
      }
      KILN_RETURN_IF_ERROR(commit(records));
      count(records);
      p_.times.wall_s = seconds_since(start_);
      if (on_batch_) on_batch_(p_);
      KILN_RETURN_IF_ERROR(decide_next());
    }
    p_.times.wall_s = seconds_since(start_);
    // The time after the last batch (abandoning batches built ahead); nothing to add to a run
    // that measured nothing.
    if (added_.trials > 0) KILN_RETURN_IF_ERROR(store_.add_run_times(times_since_added(0, 0)));
    return p_;
  }

 private:
  double now() const { return options_.clock ? options_.clock() : unix_now(); }

  bool stop_early() const {
    return options_.early_stopping && p_.done >= best_age_origin_ + *options_.early_stopping;
  }

  static std::vector<int64_t> configs_of(const std::vector<MeasureInput>& inputs) {
    std::vector<int64_t> indices;
    for (const MeasureInput& input : inputs) indices.push_back(input.config.index());
    return indices;
  }

  // What was spent since the last addition, with `trials` new records of which `errors` failed.
  store::RunTimes times_since_added(int64_t trials, int64_t errors) const {
    store::RunTimes delta = added_;
    delta.updated = unix_now();
    delta.trials = trials;
    delta.errors = errors;
    delta.build_s = std::max(0.0, p_.times.build_s - added_.build_s);
    delta.run_s = std::max(0.0, p_.times.run_s - added_.run_s);
    delta.store_s = std::max(0.0, p_.times.store_s - added_.store_s);
    delta.wall_s = std::max(0.0, seconds_since(start_) - added_.wall_s);
    std::optional<double> cooldown = runner_.cooldown_seconds();
    if (cooldown && cooldown_at_start_) {
      delta.cooldown_s =
          std::max(0.0, *cooldown - *cooldown_at_start_ - added_.cooldown_s.value_or(0));
    } else {
      delta.cooldown_s.reset();
    }
    return delta;
  }

  // Takes the task's records (in id order) into the run's state; configs they settle count as
  // trials and are fed to the tuner as visited with their throughput. Returns how many.
  int64_t absorb(const std::vector<store::Record>& records, bool found_at_start) {
    std::vector<int64_t> indices;
    std::vector<double> flops;
    for (const store::Record& r : records) {
      last_seen_id_ = std::max(last_seen_id_, r.id);
      if (!space_.is_index_valid(r.config_index)) continue;
      // Another program was timed (an older measurement version): never compared with new ones.
      if (!store::is_comparable(r)) continue;
      double f = r.flops();
      if (f > p_.best_flops) {
        p_.best_flops = f;
        p_.best = r;
        best_age_origin_ = p_.done + 1;
      }
      if (!rule_.settles(r, found_at_start)) {
        if (!done_.count(r.config_index)) failed_at_start_.insert(r.config_index);
        continue;
      }
      // The same config may be recorded twice (e.g. imported logs); it is one trial.
      if (!done_.insert(r.config_index).second) continue;
      failed_at_start_.erase(r.config_index);
      ++p_.done;
      tuner_.mark_visited(r.config_index);
      indices.push_back(r.config_index);
      flops.push_back(f);
    }
    if (!indices.empty()) tuner_.update(indices, flops);
    return static_cast<int64_t>(indices.size());
  }

  // Resume: replays what the store already holds for this task (and counts its outdated
  // records). Nothing is started yet, so a store failure returns as it is.
  Status resume() {
    store::RecordFilter filter = store::RecordFilter::of_task(this_task_);
    filter.versions = store::Versions::kOutdated;
    KILN_ASSIGN_OR_RETURN(p_.outdated, store_.count(filter));
    filter.versions = store::Versions::kComparable;
    KILN_ASSIGN_OR_RETURN(std::vector<store::Record> history, store_.records(filter));
    absorb(history, /*found_at_start=*/true);
    p_.resumed = p_.done;
    return Status::Ok();
  }

  // Pipelining: whenever the tuner can propose without the pending results, later batches
  // build while this one is measured; the builders are stopped whenever a kernel runs, so they
  // only use the runner's cooldowns and the loop's own pauses. run() clears the hooks on return.
  void install_pipeline_hooks() {
    if (!options_.pipeline) return;
    runner::Runner::Hooks hooks;
    hooks.before_kernel = [this] { builder_.pause(); };
    hooks.after_kernel = [this] { builder_.resume(); };
    hooks.idle = [this](double seconds) { builder_.work_for(seconds); };
    runner_.set_hooks(std::move(hooks));
  }

  // Proposes, claims and starts the next batch: up to batch_size configs of what is left once
  // the pending trials count. False when there is nothing left to propose.
  Result<bool> start_next() {
    while (true) {
      int64_t left = p_.total - p_.done - pending_;
      if (left <= 0 || !tuner_.has_next() || stop_early()) return false;
      std::vector<int64_t> proposed;
      if (options_.first_config && !first_config_proposed_) {
        first_config_proposed_ = true;
        if (space_.is_index_valid(*options_.first_config) && !done_.count(*options_.first_config)) {
          proposed.push_back(*options_.first_config);
          tuner_.mark_visited(*options_.first_config);
        }
      }
      int64_t wanted = std::min<int64_t>(batch_size_, left) - static_cast<int64_t>(proposed.size());
      if (wanted > 0) {
        for (int64_t index : tuner_.next_batch(static_cast<int>(wanted))) proposed.push_back(index);
      }
      if (proposed.empty()) return false;
      double claimed_at = now();
      KILN_ASSIGN_OR_RETURN(store::Claim claim,
                            store_.claim(task_, proposed, last_seen_id_, owner_, claimed_at,
                                         claimed_at + options_.lease_s));
      // Others' trials since the last look count now, before deciding what is still wanted.
      p_.concurrent += absorb(claim.unseen, /*found_at_start=*/false);
      left = p_.total - p_.done - pending_;
      std::vector<int64_t> unwanted;
      std::vector<MeasureInput> inputs;
      for (int64_t index : claim.claimed) {
        if (done_.count(index) || static_cast<int64_t>(inputs.size()) >= left) {
          unwanted.push_back(index);
        } else {
          inputs.push_back({this_task_, space_.get(index)});
        }
      }
      KILN_RETURN_IF_ERROR(store_.release_leases(task_, unwanted, owner_));
      // Configs not claimed are another tuner's: visited for this tuner, never measured here.
      if (inputs.empty()) continue;
      builder_.start(inputs);
      pending_ += static_cast<int64_t>(inputs.size());
      started_.push_back(std::move(inputs));
      return true;
    }
  }

  // Batches built ahead but not wanted: never measured, never recorded; their leases released.
  void abandon_started() {
    std::vector<int64_t> unmeasured;
    for (; !started_.empty(); started_.pop_front()) {
      builder_.finish();
      for (int64_t index : configs_of(started_.front())) unmeasured.push_back(index);
    }
    pending_ = 0;
    // Best effort: a lease that cannot be released now expires by itself.
    (void)store_.release_leases(task_, unmeasured, owner_);
  }

  // `s`, after abandoning what was started: how every step fails once batches are under way.
  Status fail(const Status& s) {
    abandon_started();
    return s;
  }

  // Waits for the oldest started batch to build (timed as build time).
  std::vector<BuildResult> finish_build() {
    auto phase = Clock::now();
    std::vector<BuildResult> builds = builder_.finish();
    p_.times.build_s += seconds_since(phase);
    return builds;
  }

  // With pipelining, starts more batches (up to build_ahead) while the tuner can propose them
  // without the pending results. On failure `inputs` (the batch about to run) is released too.
  Status build_ahead(const std::vector<MeasureInput>& inputs) {
    if (!options_.pipeline) return Status::Ok();
    while (static_cast<int>(started_.size()) < options_.build_ahead &&
           tuner_.can_propose_ahead(pending_)) {
      Result<bool> more = start_next();
      if (!more.ok()) {
        (void)store_.release_leases(task_, configs_of(inputs), owner_);
        return fail(more.status());
      }
      if (!*more) break;
    }
    return Status::Ok();
  }

  // Renews this owner's leases (the batch about to run and those built ahead stay ours for
  // another lease period), then runs the batch (timed as store and run time).
  Result<std::vector<MeasureResult>> measure(const std::vector<MeasureInput>& inputs,
                                             const std::vector<BuildResult>& builds) {
    auto phase = Clock::now();
    Status renewed = store_.renew_leases(owner_, now() + options_.lease_s);
    p_.times.store_s += seconds_since(phase);
    if (!renewed.ok()) {
      (void)store_.release_leases(task_, configs_of(inputs), owner_);
      return fail(renewed);
    }
    phase = Clock::now();
    std::vector<MeasureResult> results = runner_.run(inputs, builds);
    p_.times.run_s += seconds_since(phase);
    return results;
  }

  // Appends the batch's records with the run's times since the last addition, in one
  // transaction that also releases their leases. Nothing counts before this succeeds.
  Status commit(const std::vector<store::Record>& records) {
    int64_t batch_errors = 0;
    for (const store::Record& r : records) batch_errors += r.error_no != 0 ? 1 : 0;
    const store::RunTimes times =
        times_since_added(static_cast<int64_t>(records.size()), batch_errors);
    auto phase = Clock::now();
    Status committed = store_.append(records, owner_, &times);
    p_.times.store_s += seconds_since(phase);
    if (!committed.ok()) {
      return fail(Status::Error(committed.code(), "cannot commit measurements to " + store_.path() +
                                                      ": " + committed.message()));
    }
    added_.add(times);
    return Status::Ok();
  }

  // Committed records count: progress, errors, retries, the best so far, and the tuner's update.
  void count(const std::vector<store::Record>& records) {
    std::vector<int64_t> batch;
    std::vector<double> batch_flops;
    p_.current_flops = 0;
    for (const store::Record& r : records) {
      --pending_;
      // An emulator's cost is not the device's speed: such a trial is never the best, and the
      // tuner learns nothing from it (every config of an emulated tune scores alike, 0).
      const bool emulated = store::is_emulated(r);
      if (emulated) ++p_.emulated;
      double f = emulated ? 0 : r.flops();
      p_.current_flops = std::max(p_.current_flops, f);
      if (r.error_no != 0) {
        ++p_.errors;
        ++p_.consecutive_errors;
      } else {
        p_.consecutive_errors = 0;
      }
      if (failed_at_start_.erase(r.config_index)) ++p_.retried;
      // Claimed, so no other tuner recorded it meanwhile; done.insert can only fail if the
      // lease expired under a slow batch and another tuner measured the config too.
      if (!done_.insert(r.config_index).second) continue;
      ++p_.done;
      batch.push_back(r.config_index);
      batch_flops.push_back(f);
      if (f > p_.best_flops) {
        p_.best_flops = f;
        p_.best = r;
        best_age_origin_ = p_.done;
      }
    }
    tuner_.update(batch, batch_flops);
  }

  // After a batch: a stop request or early stopping abandons what was built ahead (a stop also
  // marks the progress interrupted); otherwise, with nothing started, starts the next batch.
  Status decide_next() {
    if (options_.stop.stop_requested()) {
      abandon_started();
      p_.interrupted = true;
    } else if (stop_early()) {
      abandon_started();
    } else if (started_.empty()) {
      Result<bool> next = start_next();
      if (!next.ok()) return fail(next.status());
    }
    return Status::Ok();
  }

  const ConfigSpace& space_;
  Tuner& tuner_;
  builder::Builder& builder_;
  runner::Runner& runner_;
  store::Store& store_;
  const TuneOptions& options_;
  const std::function<void(const TuneProgress&)>& on_batch_;

  const Clock::time_point start_;
  const double flop_;
  const Task this_task_;
  const store::TaskKey task_;
  const ResumeRule rule_;
  const std::string owner_;
  TuneProgress p_;
  store::RunTimes added_;  // what this call has added to the run's times so far
  std::optional<double> cooldown_at_start_;
  int batch_size_ = 0;

  // What the store holds for the task, as far as this run has looked.
  std::unordered_set<int64_t> done_;             // configs settled (resume_rule.h)
  std::unordered_set<int64_t> failed_at_start_;  // configs with records at start, not settled
  int64_t last_seen_id_ = 0;                     // the task's records up to here were absorbed
  int64_t best_age_origin_ = 0;                  // trial number of the best, for early stopping

  bool first_config_proposed_ = false;
  // Batches handed to the builder and not counted yet, oldest first, and their configs.
  std::deque<std::vector<MeasureInput>> started_;
  int64_t pending_ = 0;
};

}  // namespace

Result<TuneProgress> tune_task(const ops::Template& tmpl, const ops::Workload& workload,
                               const Target& target, const ConfigSpace& space, Tuner& tuner,
                               builder::Builder& builder, runner::Runner& runner,
                               store::Store& store, const TuneOptions& options,
                               const std::function<void(const TuneProgress&)>& on_batch) {
  return TaskTuning(tmpl, workload, target, space, tuner, builder, runner, store, options, on_batch)
      .run();
}

}  // namespace kiln::tuner
