// kiln tune: the tuning loop on the embedded defaults (local builder processes, an isolated
// local runner, a SQLite record store). Resumes from the records already in the store.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "builder/build_pool.h"
#include "cli/common.h"
#include "runner/local_runner.h"
#include "store/record_store.h"
#include "tuner/make_tuner.h"
#include "tuner/tune_loop.h"
#include "tuner/xgb_tuner.h"

namespace kiln::cli {

namespace {

struct TuneCommandOptions {
  TaskOptions task;
  std::string tuner = "xgb";
  bool no_transfer = false;
  tuner::TunerSettings tuner_settings;
  int64_t trials = 1000;
  std::optional<int64_t> early_stopping;
  std::string db = "kiln.db";
  uint64_t seed = 0;
  int n_parallel = 0;
  double build_timeout_s = 10;
  runner::RunnerOptions runner;
};

// Ctrl-C (SIGINT) or SIGTERM: the batch being measured is committed, then tuning stops. A
// second signal ends the process at once (the default action is restored): what is committed is
// safe either way, since every batch is one transaction.
std::atomic<bool> g_stop_requested{false};

void on_stop_signal(int sig) {
  g_stop_requested.store(true);
  signal(sig, SIG_DFL);
  const char msg[] =
      "\nkiln: interrupting: finishing the batch being measured (again to stop at once)\n";
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

// Installs on_stop_signal for the lifetime of a tuning run.
class StopSignals {
 public:
  StopSignals() {
    g_stop_requested.store(false);
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  bool requested() const { return g_stop_requested.load(); }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// AutoTVM's progress bar: "Current/Best: x/y GFLOPS | Progress: (k/n) | t s", redrawn in place
// on a terminal and printed every tenth of the budget otherwise.
class Progress {
 public:
  Progress(std::string prefix) : prefix_(std::move(prefix)), tty_(isatty(STDOUT_FILENO)) {}
  void update(const tuner::TuneProgress& p) {
    bool step = p.done * 10 / std::max<int64_t>(p.total, 1) != last_decile_;
    if (!tty_ && !step && p.done < p.total) return;
    last_decile_ = p.done * 10 / std::max<int64_t>(p.total, 1);
    std::printf("%s%s Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%lld/%lld) | %.2f s%s",
                tty_ ? "\r" : "", prefix_.c_str(), p.current_flops / 1e9, p.best_flops / 1e9,
                static_cast<long long>(p.done), static_cast<long long>(p.total), p.times.wall_s,
                tty_ ? "" : "\n");
    std::fflush(stdout);
  }
  void finish() {
    if (tty_) std::printf("\n");
  }

 private:
  std::string prefix_;
  bool tty_;
  int64_t last_decile_ = -1;
};

// "<label> W s for N new trials = x s/trial | build ... | run ... | store ... | tuner+other ..."
void print_times(const char* label, const tuner::TuneTimes& t, int64_t fresh, double cooldown_s) {
  auto pct = [&](double s) { return t.wall_s > 0 ? 100 * s / t.wall_s : 0; };
  std::printf(
      "%s %.2f s for %lld new trials = %.3f s/trial | build %.2f s (%.0f%%) | run %.2f s "
      "(%.0f%%, of which cooldown %.2f s) | store %.2f s (%.0f%%) | tuner+other %.2f s "
      "(%.0f%%)\n",
      label, t.wall_s, static_cast<long long>(fresh), t.wall_s / fresh, t.build_s, pct(t.build_s),
      t.run_s, pct(t.run_s), cooldown_s, t.store_s, pct(t.store_s), t.tuner_s(), pct(t.tuner_s()));
}

void print_summary(const Task& task, const tuner::TuneProgress& p,
                   const std::map<int, int64_t>& errors_by_code, double cooldown_s) {
  int64_t fresh = p.done - p.resumed;
  std::printf("%s %s: %lld trials (%lld resumed from the store, %lld new)\n",
              std::string(task.tmpl->name()).c_str(), task.workload.to_string().c_str(),
              static_cast<long long>(p.done), static_cast<long long>(p.resumed),
              static_cast<long long>(fresh));
  if (p.best) {
    std::printf("  best: %.2f GFLOPS (%.4f ms), config %lld %s\n", p.best_flops / 1e9,
                p.best->mean_cost() * 1e3, static_cast<long long>(p.best->config_index),
                p.best->entities.dump().c_str());
  } else {
    std::printf("  best: none (no config succeeded)\n");
  }
  if (!errors_by_code.empty()) {
    std::printf("  errors:");
    for (auto [code, n] : errors_by_code) {
      std::printf(" %s %lld", measure_error_name(static_cast<MeasureError>(code)),
                  static_cast<long long>(n));
    }
    std::printf("\n");
  }
  if (fresh > 0) print_times("  time:", p.times, fresh, cooldown_s);
}

// Transfer learning: the records of the template's other workloads train the cost model's base
// model (AutoTVM's load_history), when there are enough of them.
void transfer(tuner::XgbTuner& model_tuner, const Task& task, store::RecordStore& db) {
  store::RecordFilter filter;
  filter.task_name = std::string(task.tmpl->name());
  std::vector<store::Record> others;
  for (store::Record& r : value_or_exit(db.records(filter))) {
    if (r.workload != task.workload.to_string()) others.push_back(std::move(r));
  }
  if (others.empty()) return;
  Result<tuner::TransferReport> report = model_tuner.transfer_from(others);
  if (!report.ok()) {
    std::printf("transfer learning skipped: %s\n", report.status().message().c_str());
  } else if (report->used) {
    std::printf("transfer learning: base model from %lld records of other %s workloads (%.2f s)\n",
                static_cast<long long>(report->usable), std::string(task.tmpl->name()).c_str(),
                report->seconds);
  } else {
    std::printf(
        "transfer learning: only %lld usable records of other %s workloads (500 needed); "
        "starting from scratch\n",
        static_cast<long long>(report->usable), std::string(task.tmpl->name()).c_str());
  }
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCommandOptions>();
  CLI::App* cmd = app.add_subcommand("tune", "tune a workload's schedule, recording every trial");
  add_task_options(cmd, &o->task);
  cmd->add_option("--tuner", o->tuner, tuner::tuner_names());
  add_bounded(cmd, "--plan-size", &o->tuner_settings.plan_size, 1, 1000000,
              "xgb tuners: trials per plan, the model is refit after each");
  cmd->add_flag("--no-transfer", o->no_transfer,
                "do not start the cost model from records of other workloads of the template");
  add_bounded(cmd, "--trials", &o->trials, 1, int64_t{1} << 40,
              "trials per template (records already in the db count)");
  add_bounded(cmd, "--early-stopping", &o->early_stopping, 1, int64_t{1} << 40,
              "stop when the best config is this many trials old (default: never)");
  cmd->add_option("--db", o->db, "SQLite record store (created if absent)");
  cmd->add_option("--seed", o->seed, "seed of the tuner's randomness");
  add_bounded(cmd, "--threads", &o->runner.threads, 1, 1024,
              "threads of the kernels' parallel loops")
      ->default_str("one per core");
  add_bounded(cmd, "--n-parallel", &o->n_parallel, 1, max_n_parallel(),
              "builder processes, at most 4 per core")
      ->default_str("one per core");
  add_bounded(cmd, "--build-timeout", &o->build_timeout_s, 0, 3600, "seconds per build",
              /*min_exclusive=*/true);
  add_bounded(cmd, "--number", &o->runner.measure.time.number, 1, 1000000, "runs per timed repeat");
  add_bounded(cmd, "--repeat", &o->runner.measure.time.repeat, 1, 10000, "timed repeats");
  add_bounded(cmd, "--min-repeat-ms", &o->runner.measure.time.min_repeat_ms, 0, 600000,
              "grow number until a repeat lasts this long");
  add_bounded(cmd, "--timeout", &o->runner.timeout_s, 0, 3600, "seconds per kernel run",
              /*min_exclusive=*/true);
  add_bounded(cmd, "--cooldown-interval", &o->runner.cooldown_interval_s, 0, 3600,
              "seconds to sleep after each measured config");
  cmd->add_flag("--cache-flush", o->runner.measure.time.enable_cpu_cache_flush,
                "flush inputs from the caches before each repeat");
  return [o] {
    ResolvedTasks resolved = resolve_tasks(o->task);
    const builder::Target& target = resolved.target;
    const std::vector<Task>& tasks = resolved.tasks;
    std::unique_ptr<store::RecordStore> db = value_or_exit(store::RecordStore::open(o->db));
    builder::LocalBuildPool builder({o->n_parallel, o->build_timeout_s});
    runner::LocalRunner runner(o->runner);
    StopSignals stop;
    // Every task together; the wall time includes what happens between tasks (transfer learning).
    tuner::TuneTimes all_times;
    int64_t all_fresh = 0;
    auto all_start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < tasks.size(); ++i) {
      const Task& task = tasks[i];
      ConfigSpace space = task.tmpl->space(task.workload);
      std::unique_ptr<tuner::Tuner> search = value_or_exit(
          tuner::make_tuner(o->tuner, {*task.tmpl, task.workload, space, {target.simd_lanes()}},
                            o->seed, o->tuner_settings));
      if (auto* model_tuner = dynamic_cast<tuner::XgbTuner*>(search.get());
          model_tuner && !o->no_transfer) {
        transfer(*model_tuner, task, *db);
      }
      char prefix[256];
      std::snprintf(prefix, sizeof prefix, "[Task %2zu/%2zu] %s", i + 1, tasks.size(),
                    std::string(task.tmpl->name()).c_str());
      Progress progress(prefix);
      std::map<int, int64_t> errors;
      double cooldown_before = runner.cooldown_seconds();
      tuner::TuneOptions options;
      options.n_trial = o->trials;
      options.early_stopping = o->early_stopping;
      options.stop_requested = [&stop] { return stop.requested(); };
      Result<tuner::TuneProgress> done =
          tuner::tune_task(*task.tmpl, task.workload, target, space, *search, builder, runner, *db,
                           options, [&](const tuner::TuneProgress& p) { progress.update(p); });
      progress.finish();
      ok_or_exit(done.status());
      // Error counts of this run, from the store (the loop only keeps totals).
      store::RecordFilter filter;
      filter.target = target.to_string();
      filter.task_name = std::string(task.tmpl->name());
      filter.workload = task.workload.to_string();
      for (const store::Record& r : value_or_exit(db->records(filter))) {
        if (r.error_no != 0) ++errors[r.error_no];
      }
      print_summary(task, *done, errors, runner.cooldown_seconds() - cooldown_before);
      all_times.build_s += done->times.build_s;
      all_times.run_s += done->times.run_s;
      all_times.store_s += done->times.store_s;
      all_fresh += done->done - done->resumed;
      if (done->interrupted || stop.requested()) {
        std::printf("interrupted: %lld trials saved in %s (run the same command to resume)\n",
                    static_cast<long long>(all_fresh), o->db.c_str());
        std::fflush(stdout);
        return kInterrupted;
      }
    }
    if (tasks.size() > 1 && all_fresh > 0) {
      char label[64];
      std::snprintf(label, sizeof label, "all %zu tasks:", tasks.size());
      all_times.wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - all_start).count();
      print_times(label, all_times, all_fresh, runner.cooldown_seconds());
    }
    return 0;
  };
}

}  // namespace kiln::cli
