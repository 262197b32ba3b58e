// The tuning loop (AutoTVM's Tuner.tune, reference/autotvm.md §7) for one task: ask the tuner
// for a batch, build it, run it, commit every result to the record store, and only then count
// it and feed it back to the tuner. Resumes from the records already in the store: configs
// measured before are never measured again and count toward the trial budget.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "builder/builder.h"
#include "common/status.h"
#include "ops/template.h"
#include "runner/runner.h"
#include "store/record_store.h"
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
  // Asked after each committed batch; when it returns true, the batches built ahead are
  // abandoned (never measured, never recorded) and tune_task returns what is committed, with
  // TuneProgress::interrupted set. E.g. a SIGINT flag.
  std::function<bool()> stop_requested;
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
  int64_t done = 0;          // trials in the store for this task (resumed + new)
  int64_t total = 0;         // the trial budget
  int64_t resumed = 0;       // trials found in the store when the run started
  double current_flops = 0;  // best of the latest batch
  double best_flops = 0;
  std::optional<store::Record> best;  // the best record so far (resumed ones included)
  int64_t errors = 0;                 // failed trials of this run
  int64_t consecutive_errors = 0;
  TuneTimes times;
  bool interrupted = false;  // stopped by TuneOptions::stop_requested
};

// Tunes (tmpl, workload) on `target`. Fails only when the store cannot be read or written (a
// measurement that cannot be committed is not counted, and tuning stops); everything that goes
// wrong with a config is a record with its error code. `on_batch` is called after each
// committed batch.
Result<TuneProgress> tune_task(const ops::Template& tmpl, const ops::Workload& workload,
                               const builder::Target& target, const ConfigSpace& space,
                               Tuner& tuner, builder::Builder& builder, runner::Runner& runner,
                               store::RecordStore& store, const TuneOptions& options,
                               const std::function<void(const TuneProgress&)>& on_batch = {});

}  // namespace kiln::tuner
