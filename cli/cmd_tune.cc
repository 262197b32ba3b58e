// kiln tune: the tuning loop on the embedded defaults (local builder processes, an isolated
// local runner, a SQLite record store). Resumes from the records already in the store.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <stop_token>

#include "builder/build_pool.h"
#include "cli/common.h"
#include "cli/log_options.h"
#include "cli/remote_runner_options.h"
#include "cli/tune_live_line.h"
#include "daemon/farm_watch.h"
#include "jobs/job_plan.h"
#include "ops/registry.h"
#include "runner/local_runner.h"
#include "store/open_store.h"
#include "tuner/make_tuner.h"
#include "tuner/measure_options.h"
#include "tuner/model_tune.h"
#include "tuner/tune_job.h"
#include "tuner/tune_loop.h"

namespace kiln::cli {

namespace {

struct TuneCommandOptions {
  TaskOptions task;
  // Model mode: `kiln tune MODEL.onnx` tunes the model's tasks under one budget.
  std::string model;
  std::vector<std::string> input_shapes;
  std::vector<std::string> ops;
  std::optional<int64_t> trials_per_task;
  std::string time;
  std::string scheduler = "gradient";
  bool no_winograd = false;
  bool trials_given = false;
  std::string tuner = "xgb";
  bool no_transfer = false;
  tuner::TunerSettings tuner_settings;
  int64_t trials = 1000;
  std::optional<int64_t> early_stopping;
  std::string db = "kiln.db";
  int64_t seed = 0;  // the tuner's is unsigned: bounded so that -1 is refused, not wrapped
  int n_parallel = 0;
  double build_timeout_s = 10;
  runner::RunnerOptions runner;
  RemoteRunnerCliOptions remote;
  bool retry_errors = false;
};

// Ctrl-C (SIGINT) or SIGTERM: the batch being measured is committed, then tuning stops. A
// second signal ends the process at once (the default action is restored): what is committed is
// safe either way, since every batch is one transaction.
//
// The handler calls std::stop_source::request_stop. libstdc++ implements it with atomic
// operations on the stop state; its internal lock is only contended by stop_callback
// registration, which kiln never does, so the call cannot block in a handler.
std::stop_source* g_stop_source = nullptr;

void on_stop_signal(int sig) {
  if (g_stop_source) g_stop_source->request_stop();
  signal(sig, SIG_DFL);
  const char msg[] =
      "\nkiln: interrupting: finishing the batch being measured (again to stop at once)\n";
  ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

// Turns SIGINT and SIGTERM into a stop request for the lifetime of a tuning run.
class StopSignals {
 public:
  StopSignals() {
    g_stop_source = &source_;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    g_stop_source = nullptr;
  }
  std::stop_token token() const { return source_.get_token(); }
  void request_stop() { source_.request_stop(); }

 private:
  std::stop_source source_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// On a farm, the watch that stops the tune after a batch when the farm is lost (its tracker gone,
// or every config of the batch lost: daemon/farm_watch.h); null for the local runner.
std::unique_ptr<daemon::FarmWatch> watch_farm(const RemoteRunnerCliOptions& o,
                                              runner::Runner& inner, StopSignals& stop) {
  if (o.tracker.empty()) return nullptr;
  return std::make_unique<daemon::FarmWatch>(inner,
                                             [&stop](const std::string&) { stop.request_stop(); });
}

// A lost farm is an error (exit 1, the reason on stderr), not an interrupted or finished tune:
// what was measured is committed, and the configs recorded as lost are measured again when the
// same command is run (tuner/resume_rule.h).
void exit_if_farm_lost(const daemon::FarmWatch* farm, int64_t fresh, const std::string& db) {
  if (!farm || farm->reason().empty()) return;
  std::fflush(stdout);
  throw CommandError{farm->reason() + "; " + std::to_string(fresh) + " trials saved in " + db +
                         " (run the same command once the farm is back: the configs it lost "
                         "are measured again)",
                     kFailed};
}

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

void print_summary(const tuner::TuneTaskOutcome& outcome, double cooldown_s) {
  const tuner::TuneJobTask& task = outcome.task;
  const tuner::TuneProgress& p = outcome.progress;
  const std::map<int, int64_t>& errors_by_code = outcome.errors_by_code;
  int64_t fresh = p.done - p.resumed - p.concurrent;
  std::printf("%s %s: %lld trials (%lld resumed from the store, %lld new",
              std::string(task.tmpl->name()).c_str(), task.workload.to_string().c_str(),
              static_cast<long long>(p.done), static_cast<long long>(p.resumed),
              static_cast<long long>(fresh));
  if (p.retried > 0)
    std::printf(", of which %lld measured again", static_cast<long long>(p.retried));
  if (p.concurrent > 0) {
    std::printf(", %lld recorded by concurrent tuners", static_cast<long long>(p.concurrent));
  }
  std::printf(")\n");
  if (p.emulated > 0) {
    std::printf(
        "  note: %lld trials ran on an emulator: their outputs were checked, but their "
        "costs are not the device's speed and rank nothing\n",
        static_cast<long long>(p.emulated));
  }
  if (p.outdated > 0) {
    std::printf(
        "  note: %lld records of an older measurement version or from an emulator are "
        "ignored for this task\n",
        static_cast<long long>(p.outdated));
  }
  if (p.best) {
    std::printf("  best: %.2f GFLOPS (%.4f ms), config %lld %s\n", p.best_flops / 1e9,
                p.best->mean_cost() * 1e3, static_cast<long long>(p.best->config_index),
                p.best->entities.dump().c_str());
  } else if (p.emulated > 0) {
    std::printf("  best: none (costs measured on an emulator rank nothing)\n");
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

// Transfer learning's outcome, as kiln tune has always said it.
void print_transfer(const tuner::TuneTaskOutcome& outcome) {
  std::string name(outcome.task.tmpl->name());
  if (!outcome.transfer) {
    std::printf("transfer learning skipped: %s\n", outcome.transfer_skipped.c_str());
  } else if (outcome.transfer->used) {
    std::printf("transfer learning: base model from %lld records of other %s workloads (%.2f s)\n",
                static_cast<long long>(outcome.transfer->usable), name.c_str(),
                outcome.transfer->seconds);
  } else {
    std::printf(
        "transfer learning: only %lld usable records of other %s workloads (500 needed); "
        "starting from scratch\n",
        static_cast<long long>(outcome.transfer->usable), name.c_str());
  }
}

// The model as the runs of one command name it: its absolute path, so that the same file named
// from another working directory is the same command.
std::string model_key(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

int tune_model(const TuneCommandOptions& o, tuner::TuneJobOptions options, const Target& target) {
  for (const std::string& op : o.ops) {
    if (!ops::find_operator(op)) {
      throw CommandError{"--ops: unknown operator '" + op + "' (known: " + ops::operator_names() +
                         ")"};
    }
  }
  std::vector<tuner::ModelTask> tasks = value_or_exit(
      daemon::model_tasks(o.model, import_options(o.input_shapes), o.ops, "--ops", !o.no_winograd));
  tuner::ModelTuneOptions model_options;
  model_options.job = std::move(options);
  if (o.scheduler == "round-robin") {
    model_options.scheduler.strategy = tuner::SchedulerStrategy::kRoundRobin;
  } else if (o.scheduler != "gradient") {
    throw CommandError{"--scheduler: expected gradient or round-robin, got '" + o.scheduler + "'"};
  }
  if (o.trials_given) model_options.budget.total_trials = o.trials;
  model_options.budget.trials_per_task = o.trials_per_task;
  if (!o.time.empty()) model_options.budget.seconds = parse_duration("--time", o.time);
  if (!o.trials_given && !o.trials_per_task && o.time.empty()) {
    model_options.budget.trials_per_task = o.trials;  // --trials' default, per task
  }
  model_options.round_trials = daemon::round_trials(model_options.budget, tasks.size());

  std::unique_ptr<store::Store> db = value_or_exit(store::open_store(o.db));
  // --time counts the tuning time of every run of this command (model and target) on this store,
  // as a daemon job's budget counts its runs over restarts: a killed or stopped run resumed with
  // the same command gets what is left, not another budget. Its runs share a run-id prefix.
  const std::string command_runs =
      "kiln tune " + model_key(o.model) + " " + target.to_string() + " ";
  model_options.job.loop.run_id = command_runs + tuner::unique_run_id();
  double spent_before = 0;
  if (model_options.budget.seconds) {
    // A run's tuning time is from its first task's start to its last commit: the tasks' own
    // wall times overlap (a task's loop stays open across the rounds of the others).
    std::map<std::string, std::pair<double, double>> spans;  // run -> (started, last update)
    for (const store::RunTimes& r : value_or_exit(db->run_times())) {
      if (r.run.rfind(command_runs, 0) != 0) continue;
      auto [it, fresh] = spans.try_emplace(r.run, r.started, r.updated);
      it->second = {std::min(it->second.first, r.started), std::max(it->second.second, r.updated)};
    }
    for (const auto& [run, span] : spans) spent_before += std::max(0.0, span.second - span.first);
    if (spent_before >= *model_options.budget.seconds) {
      std::printf(
          "time budget of %s already spent: %s of tuning by earlier runs of this command "
          "on %s (a larger --time tunes on)\n",
          o.time.c_str(), clock_text(spent_before).c_str(), o.db.c_str());
      return 0;
    }
    *model_options.budget.seconds -= spent_before;
  }
  std::unique_ptr<builder::Builder> builder_ptr =
      make_builder(o.remote, o.n_parallel, o.build_timeout_s);
  builder::Builder& builder = *builder_ptr;
  std::unique_ptr<runner::Runner> runner_ptr = make_runner(o.remote, o.runner);
  StopSignals stop;
  std::unique_ptr<daemon::FarmWatch> farm = watch_farm(o.remote, *runner_ptr, stop);
  runner::Runner& runner = farm ? *farm : *runner_ptr;
  model_options.job.loop.lease_s =
      tuner::lease_seconds(o.runner, o.build_timeout_s, builder.n_parallel());
  tuner::ModelTuneJob job(std::move(tasks), target, model_options);
  std::printf(
      "%s: %zu tasks, %s scheduler, budget:%s%s%s\n", o.model.c_str(), job.tasks().size(),
      o.scheduler.c_str(),
      model_options.budget.total_trials
          ? (" " + std::to_string(*model_options.budget.total_trials) + " trials").c_str()
          : "",
      model_options.budget.trials_per_task
          ? (" " + std::to_string(*model_options.budget.trials_per_task) + " per task").c_str()
          : "",
      model_options.budget.seconds
          ? (" " + o.time + " of tuning over every run of this command" +
             (spent_before > 0 ? " (" + clock_text(spent_before) + " spent before, " +
                                     clock_text(*model_options.budget.seconds) + " left)"
                               : std::string()))
                .c_str()
          : "");
  const TimeOptions& timing = o.runner.measure.time;
  std::printf(
      "timing: number %d, repeat %d, min_repeat_ms %d, %s\n", timing.number, timing.repeat,
      timing.min_repeat_ms,
      timing.enable_cpu_cache_flush ? "caches flushed before each repeat" : "caches kept warm");
  std::fflush(stdout);

  bool tty = isatty(STDOUT_FILENO);
  int last_task = -2;
  tuner::ModelTuneEvents events;
  events.progress = [&](const tuner::ModelTuneStatus& st) {
    // On a terminal the line is redrawn in place; otherwise a line whenever the task changes.
    if (!tty && st.current == last_task) return;
    last_task = st.current;
    std::string task = "-";
    if (st.current >= 0) {
      const tuner::ModelTask& t = job.tasks()[st.current];
      task = std::to_string(st.current + 1) + "/" + std::to_string(job.tasks().size()) + " " +
             std::string(t.task.tmpl->name()) + " " + t.task.workload.to_string();
    }
    std::printf("%s%s%s", tty ? "\r\033[K" : "",
                tune_live_line(st, model_options.budget.total_trials, task).c_str(),
                tty ? "" : "\n");
    std::fflush(stdout);
  };
  tuner::ModelTuneResult result =
      value_or_exit(job.run(builder, runner, *db, events, stop.token()));
  if (tty) std::printf("\n");

  // The per-task table.
  bool complete = false;
  double latency = job.estimated_latency(result.tasks, &complete);
  std::printf("%3s  %-28s %6s %7s %12s %10s %7s  %s\n", "#", "template", "weight", "trials",
              "best GFLOPS", "best ms", "share", "workload");
  for (size_t i = 0; i < job.tasks().size(); ++i) {
    const tuner::ModelTask& t = job.tasks()[i];
    const tuner::ModelTaskState& s = result.tasks[i];
    bool measured = std::isfinite(s.best_seconds);
    // A workload with two templates (dense) costs what its faster one does: only that one has
    // a share of the latency.
    bool winner = measured;
    for (size_t j = 0; j < job.tasks().size(); ++j) {
      if (j != i && job.tasks()[j].task.workload.to_string() == t.task.workload.to_string() &&
          result.tasks[j].best_seconds < s.best_seconds) {
        winner = false;
      }
    }
    char share[16] = "-";
    if (winner && latency > 0) {
      std::snprintf(share, sizeof share, "%.1f%%", 100 * t.weight * s.best_seconds / latency);
    }
    std::printf("%3zu  %-28s %6.0f %7lld %12.2f %10.4f %7s  %s\n", i,
                std::string(t.task.tmpl->name()).c_str(), t.weight,
                static_cast<long long>(s.trials), s.best_flops / 1e9,
                measured ? s.best_seconds * 1e3 : 0.0, share, t.task.workload.to_string().c_str());
  }
  std::printf(
      "estimated end-to-end latency %s (start %s); %lld trials in the store, %lld new "
      "in %s\n",
      latency_text(latency, complete).c_str(),
      latency_text(result.status.start_latency_s, result.status.start_latency_complete).c_str(),
      static_cast<long long>(result.status.trials), static_cast<long long>(result.status.fresh),
      clock_text(result.status.elapsed_s).c_str());
  exit_if_farm_lost(farm.get(), result.status.fresh, o.db);
  if (result.interrupted) {
    std::printf("interrupted: %lld trials saved in %s (run the same command to resume)\n",
                static_cast<long long>(result.status.fresh), o.db.c_str());
    std::fflush(stdout);
    return kInterrupted;
  }
  if (result.out_of_time) std::printf("time budget of %s reached\n", o.time.c_str());
  std::printf("compile with: kiln compile %s --db %s -o model.kiln\n", o.model.c_str(),
              o.db.c_str());
  return 0;
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCommandOptions>();
  auto log = std::make_shared<LogOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "tune a workload's schedule, or a whole ONNX model's tasks, recording every trial");
  cmd->add_option("model", o->model,
                  "an ONNX model: tune its tasks (kiln tasks) under one budget, a round at a "
                  "time where the estimated latency drops most");
  add_task_options(cmd, &o->task, /*workload_required=*/false);
  cmd->add_option("--input-shape", o->input_shapes,
                  "model: NAME=DIMS for an input with symbolic dimensions");
  cmd->add_option("--ops", o->ops,
                  "model: tune only these operators (" + ops::operator_names() +
                      "; conv2d includes depthwise)")
      ->delimiter(',');
  add_bounded(cmd, "--trials-per-task", &o->trials_per_task, 1, int64_t{1} << 40,
              "model: trials per task at most (records already in the db count)");
  CLI::Option* time =
      cmd->add_option("--time", o->time,
                      "model: tuning-time budget, e.g. 8h, 30m, 1h30m, over every run of the "
                      "same command (model, target) on the same --db, as a kiln serve job's (the "
                      "batch running when it ends is finished and recorded)");
  cmd->add_option("--scheduler", o->scheduler,
                  "model: gradient (Ansor's, the default) or round-robin (AutoTVM's order)");
  cmd->add_flag("--no-winograd", o->no_winograd,
                "model: tune only TVM's tasks, not also kiln's own templates: "
                "conv2d_NCHWc_winograd.x86 for the 3x3 stride-1 convolutions and "
                "conv2d_NCHWc_ragged.x86 for those whose K is off the widest vector, "
                "conv2d_NCHWc_flat.x86 for the 1x1 ones without padding and "
                "dense_pack_ragged.x86 for dense with M >= 8 (`kiln compile` uses a template's "
                "record only where it measured faster)");
  cmd->add_option("--loss", o->tuner_settings.loss, "xgb tuners: rank, reg or rank-binary");
  cmd->add_option("--feature", o->tuner_settings.feature, "xgb tuners: itervar, knob or curve");
  cmd->add_option("--diversity-filter-ratio", o->tuner_settings.diversity_filter_ratio,
                  "xgb tuners: keep the plan's most diverse of plan-size x ratio candidates")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--tuner", o->tuner, tuner::tuner_names());
  add_bounded(cmd, "--plan-size", &o->tuner_settings.plan_size, 1, 1000000,
              "xgb tuners: trials per plan, the model is refit after each");
  cmd->add_flag("--no-transfer", o->no_transfer,
                "do not start the cost model from records of other workloads of the template");
  CLI::Option* trials = add_bounded(cmd, "--trials", &o->trials, 1, int64_t{1} << 40,
                                    "trials per template; model: in all (records already in the "
                                    "db count)");
  add_bounded(cmd, "--early-stopping", &o->early_stopping, 1, int64_t{1} << 40,
              "stop when the best config is this many trials old (default: never)");
  cmd->add_option("--db", o->db, "SQLite record store (created if absent)");
  add_bounded(cmd, "--seed", &o->seed, 0, std::numeric_limits<int64_t>::max(),
              "seed of the tuner's randomness");
  add_bounded(cmd, "--threads", &o->runner.threads, 1, 1024,
              "threads of the kernels' parallel loops")
      ->default_str("one per core");
  add_bounded(cmd, "--n-parallel", &o->n_parallel, 1, max_n_parallel(),
              "builder processes, at most 4 per core")
      ->default_str("one per core");
  add_bounded(cmd, "--build-timeout", &o->build_timeout_s, 0, 3600, "seconds per build",
              /*min_exclusive=*/true);
  // A model's tasks are timed as TVM's tune_relay_x86 does unless any of these is given.
  auto timing = std::make_shared<std::vector<CLI::Option*>>();
  timing->push_back(add_bounded(cmd, "--number", &o->runner.measure.time.number, 1, 1000000,
                                "runs per timed repeat")
                        ->default_str("4; model: 1"));
  timing->push_back(
      add_bounded(cmd, "--repeat", &o->runner.measure.time.repeat, 1, 10000, "timed repeats")
          ->default_str("3; model: 10"));
  timing->push_back(add_bounded(cmd, "--min-repeat-ms", &o->runner.measure.time.min_repeat_ms, 0,
                                600000, "grow number until a repeat lasts this long"));
  add_bounded(cmd, "--timeout", &o->runner.timeout_s, 0, 3600, "seconds per kernel run",
              /*min_exclusive=*/true);
  add_bounded(cmd, "--cooldown-interval", &o->runner.cooldown_interval_s, 0, 3600,
              "seconds to sleep after each measured config");
  timing->push_back(cmd->add_flag(
      "--cache-flush,!--no-cache-flush", o->runner.measure.time.enable_cpu_cache_flush,
      "flush every argument but the data from the caches before each repeat (default: a model's "
      "tasks only, timed with number 1, repeat 10, as TVM tunes a model on a CPU)"));
  add_remote_runner_options(cmd, &o->remote);
  cmd->add_flag("--retry-errors", o->retry_errors,
                "measure again every config whose records are all failures (by default only "
                "timeouts and lost runners recorded under other measure options are)");
  add_log_options(cmd, log.get());
  return [o, trials, time, timing, log] {
    start_log("kiln tune", *log);
    o->trials_given = trials->count() > 0;
    // Checked even when empty: `--time ''` (an unset variable) is a mistake, not "no budget".
    if (time->count() > 0) parse_duration("--time", o->time);
    if (o->model.empty() == o->task.workload.empty()) {
      throw CommandError{"give either a model (kiln tune MODEL.onnx) or --workload"};
    }
    if (o->model.empty() &&
        (o->trials_per_task || !o->time.empty() || !o->ops.empty() || !o->input_shapes.empty())) {
      throw CommandError{
          "--trials-per-task, --time, --ops and --input-shape are for tuning a model"};
    }
    if (!o->model.empty()) {
      if (!o->task.template_name.empty()) {
        throw CommandError{"--template is for --workload; a model's tasks use every template"};
      }
      Target target = resolve_target(o->task.target);
      if (std::none_of(timing->begin(), timing->end(),
                       [](const CLI::Option* opt) { return opt->count() > 0; })) {
        tuner::use_model_timing(o->runner.measure.time);
      }
      tuner::TuneJobOptions options;
      options.tuner = o->tuner;
      options.tuner_settings = o->tuner_settings;
      options.seed = static_cast<uint64_t>(o->seed);
      options.transfer = !o->no_transfer;
      options.loop.early_stopping = o->early_stopping;
      options.loop.measure_options = tuner::measure_options_text(o->runner, o->build_timeout_s);
      options.loop.retry_errors = o->retry_errors;
      return tune_model(*o, std::move(options), target);
    }
    ResolvedTasks resolved = resolve_tasks(o->task);
    std::vector<tuner::TuneJobTask> tasks;
    for (const Task& t : resolved.tasks) tasks.push_back({t.tmpl, t.workload});
    tuner::TuneJobOptions options;
    options.tuner = o->tuner;
    options.tuner_settings = o->tuner_settings;
    options.seed = static_cast<uint64_t>(o->seed);
    options.transfer = !o->no_transfer;
    options.loop.n_trial = o->trials;
    options.loop.early_stopping = o->early_stopping;
    options.loop.measure_options = tuner::measure_options_text(o->runner, o->build_timeout_s);
    options.loop.retry_errors = o->retry_errors;

    std::unique_ptr<store::Store> db = value_or_exit(store::open_store(o->db));
    std::unique_ptr<builder::Builder> builder_ptr =
        make_builder(o->remote, o->n_parallel, o->build_timeout_s);
    builder::Builder& builder = *builder_ptr;
    std::unique_ptr<runner::Runner> runner_ptr = make_runner(o->remote, o->runner);
    StopSignals stop;
    std::unique_ptr<daemon::FarmWatch> farm = watch_farm(o->remote, *runner_ptr, stop);
    runner::Runner& runner = farm ? *farm : *runner_ptr;
    options.loop.lease_s =
        tuner::lease_seconds(o->runner, o->build_timeout_s, builder.n_parallel());
    tuner::TuneJob job(std::move(tasks), resolved.target, options);
    std::unique_ptr<Progress> progress;
    double cooldown_before = 0;
    tuner::TuneJobEvents events;
    events.task_started = [&](size_t i, const tuner::TuneJobTask& task) {
      char prefix[256];
      std::snprintf(prefix, sizeof prefix, "[Task %2zu/%2zu] %s", i + 1, job.tasks().size(),
                    std::string(task.tmpl->name()).c_str());
      progress = std::make_unique<Progress>(prefix);
      cooldown_before = cooldown_seconds(runner);
    };
    events.transfer_done = [](size_t, const tuner::TuneTaskOutcome& t) { print_transfer(t); };
    events.batch_committed = [&](size_t, const tuner::TuneProgress& p) { progress->update(p); };
    events.task_finished = [&](size_t, const tuner::TuneTaskOutcome& t) {
      progress->finish();
      print_summary(t, cooldown_seconds(runner) - cooldown_before);
    };
    tuner::TuneJobResult result =
        value_or_exit(job.run(builder, runner, *db, events, stop.token()));
    exit_if_farm_lost(farm.get(), result.fresh, o->db);
    if (result.interrupted) {
      std::printf("interrupted: %lld trials saved in %s (run the same command to resume)\n",
                  static_cast<long long>(result.fresh), o->db.c_str());
      std::fflush(stdout);
      return kInterrupted;
    }
    if (job.tasks().size() > 1 && result.fresh > 0) {
      char label[64];
      std::snprintf(label, sizeof label, "all %zu tasks:", job.tasks().size());
      print_times(label, result.times, result.fresh, cooldown_seconds(runner));
    }
    return 0;
  };
}

}  // namespace kiln::cli
