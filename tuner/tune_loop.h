// The tuning loop (AutoTVM's Tuner.tune, reference/autotvm.md §7) for one task: ask the tuner
// for a batch, build it, run it, commit every result to the record store, and only then count
// it and feed it back to the tuner.
//
// Resuming: the records already in the store for the task are replayed to the tuner; the configs
// they settle (tuner/resume_rule.h: successes, failures caused by the config, environmental
// failures under the same measure options) are never measured again and count toward the trial
// budget, once per config however many records they have. A config whose only records are
// environmental failures under other or unknown options (or, with retry_errors, any failures)
// is proposed and measured again; its old records stay in the store. Only records comparable
// with a measurement made now count (store::is_comparable): a record of an older measurement
// version timed another program, so its config is measured again (TuneProgress::outdated says
// how many such records were ignored).
//
// Concurrent tuners of one task on one store: before building a batch the loop claims its
// configs in the store (Store::claim). A config another live tuner holds, or that the
// records appended since the loop last looked show to be done, is not measured: the tuner marks
// it visited and proposes others. Records other tuners append count toward this run's budget
// once the run has seen them: they are read at every claim. Claims are made when a batch is
// proposed, up to build_ahead batches before it is measured, and another tuner's live claims
// do not count, so two tuners started together may each measure up to their own budget (on
// distinct configs). Leases are renewed at every batch and released when the
// config's record is appended; those of a killed tuner expire after TuneOptions::lease_s.
#pragma once

#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "builder/builder.h"
#include "common/status.h"
#include "ops/template.h"
#include "runner/runner.h"
#include "store/store.h"
#include "tuner/tuner.h"

namespace kiln::tuner {

struct TuneOptions {
  int64_t n_trial = 1000;  // total records wanted for the task in the store (resumed ones count)
  std::optional<int64_t> early_stopping;  // stop when the best is this many trials old
  int batch_size = 0;                     // configs per batch; 0 means builder.n_parallel()
  std::string source = "kiln tune";       // written to each record
  // Build the next batches while this one is measured whenever the tuner can propose them
  // without the pending results (Tuner::can_propose_ahead); the builders are stopped while
  // kernels run and build during the runner's cooldowns.
  bool pipeline = true;
  // With pipelining, batches started ahead of the one being measured, at most. Several, so
  // that a config slow to build is absorbed by the cooldowns of the configs before it.
  int build_ahead = 16;
  // Checked after each committed batch; once a stop is requested, the batches built ahead are
  // abandoned (never measured, never recorded) and tune_task returns what is committed, with
  // TuneProgress::interrupted set (kiln tune requests it on SIGINT).
  std::stop_token stop;

  // Stored with every record (measure_options.h: measure_options_text); "" = unknown, which
  // makes this run's environmental failures worth measuring again by any later run.
  std::string measure_options;
  // Measure again every config whose records found in the store are all failures.
  bool retry_errors = false;
  // A config to put in the first batch, ahead of the tuner's proposals, unless the store already
  // settles it: model tuning measures each task's fallback config first, so that a tuned record
  // is never a worse choice than the fallback that compiling without it would use.
  std::optional<int64_t> first_config;
  // Who claims configs in the store; "" makes a unique one (unique_run_id).
  std::string lease_owner;
  // The run this call belongs to (store/run_times.h): each batch's commit adds what was spent
  // since the previous one to the run's row for the task, in the same transaction as the
  // batch's records, so that a killed run still shows where its time went. "" means the lease
  // owner (one call, one run). TuneJob and ModelTuneJob set one per run so that all their calls
  // share it.
  std::string run_id;
  // How long a claim lasts without renewal (measure_options.h: lease_seconds).
  double lease_s = 600;
  // Unix seconds, for lease expiry; empty means the system clock. Tests inject one.
  std::function<double()> clock;
};

// Where the wall time of a tuning run went.
struct TuneTimes {
  double build_s = 0;  // builder pool, wall
  double run_s = 0;    // runner (checking, timing and cooldown), wall
  double store_s = 0;  // committing records
  double wall_s = 0;   // the whole run
  double tuner_s() const { return wall_s - build_s - run_s - store_s; }  // search + bookkeeping
};

struct TuneProgress {
  int64_t done = 0;          // configs done in the store for this task (resumed + concurrent + new)
  int64_t total = 0;         // the trial budget
  int64_t resumed = 0;       // trials found in the store when the run started
  int64_t concurrent = 0;    // trials other tuners recorded while this run went on
  int64_t retried = 0;       // configs this run measured again (see the resume rule)
  int64_t emulated = 0;      // trials measured on an emulator: checked, never ranked by cost
  int64_t outdated = 0;      // the task's records of an older measurement version, ignored
  double current_flops = 0;  // best of the latest batch
  double best_flops = 0;
  std::optional<store::Record> best;  // the best record so far (resumed ones included)
  int64_t errors = 0;                 // failed trials of this run
  int64_t consecutive_errors = 0;
  TuneTimes times;
  bool interrupted = false;  // stopped by TuneOptions::stop
};

// An identity no other run or tuner uses: host and process id tell a person who it is, a random
// part keeps two runs of one process (or a reused pid) apart: "host/pid/hex".
std::string unique_run_id();

// Tunes (tmpl, workload) on `target`. Fails only when the store cannot be read or written (a
// measurement that cannot be committed is not counted, and tuning stops); everything that goes
// wrong with a config is a record with its error code.
// `on_batch` is called after each committed batch.
Result<TuneProgress> tune_task(const ops::Template& tmpl, const ops::Workload& workload,
                               const Target& target, const ConfigSpace& space, Tuner& tuner,
                               builder::Builder& builder, runner::Runner& runner,
                               store::Store& store, const TuneOptions& options,
                               const std::function<void(const TuneProgress&)>& on_batch = {});

}  // namespace kiln::tuner
