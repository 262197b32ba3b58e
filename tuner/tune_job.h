// A tuning job: the tasks of one workload (or of a model) tuned one after the other on one
// builder, one runner and one record store, as `kiln tune`, the benchmarks and (later) the
// daemon run them. Per task: make the tuner, start the xgb tuners' cost model from records of
// the template's other workloads (AutoTVM's transfer learning), run the tuning loop
// (tune_loop.h), and count the task's records by error code. A stop token ends the job after the
// batch being measured is committed.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "builder/builder.h"
#include "builder/target.h"
#include "common/status.h"
#include "ops/template.h"
#include "runner/runner.h"
#include "store/store.h"
#include "tuner/make_tuner.h"
#include "tuner/tune_loop.h"
#include "tuner/xgb_tuner.h"

namespace kiln::tuner {

struct TuneJobTask {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;  // normalized by tmpl
};

struct TuneJobOptions {
  std::string tuner = "xgb";  // make_tuner's names
  TunerSettings tuner_settings;
  uint64_t seed = 0;  // every task's tuner starts from this seed
  // xgb tuners: learn a base model from the store's records of the template's other workloads.
  bool transfer = true;
  // xgb tuners: learn the base model from these records instead of the store's (every task
  // must then transfer: a job whose base model could not be trained fails).
  const std::vector<store::Record>* transfer_records = nullptr;
  TuneOptions loop;  // n_trial, early_stopping, source, pipelining; stop is the job's
  // Put each task's default config (Template::default_config, what `kiln compile` runs an
  // untuned task with) in its first batch (TuneOptions::first_config).
  bool measure_fallback_first = false;
};

// What happened to one task.
struct TuneTaskOutcome {
  TuneJobTask task;
  TuneProgress progress;
  std::optional<TransferReport> transfer;  // when the tuner tried transfer learning
  std::string transfer_skipped;            // why transfer learning could not run, if it could not
  std::map<int, int64_t> errors_by_code;   // the task's failed records in the store, by error_no
};

struct TuneJobResult {
  std::vector<TuneTaskOutcome> tasks;  // those started, in order
  TuneTimes times;                     // summed over tasks; wall_s is the whole job's
  int64_t fresh = 0;                   // trials measured by this job (not resumed)
  bool interrupted = false;            // stopped by the stop token
};

// Callbacks while the job runs (all optional), on the calling thread.
struct TuneJobEvents {
  std::function<void(size_t index, const TuneJobTask&)> task_started;
  std::function<void(size_t index, const TuneTaskOutcome&)> transfer_done;  // after the attempt
  std::function<void(size_t index, const TuneProgress&)> batch_committed;
  std::function<void(size_t index, const TuneTaskOutcome&)> task_finished;
};

class TuneJob {
 public:
  TuneJob(std::vector<TuneJobTask> tasks, Target target, TuneJobOptions options);

  // Tunes every task in order. Fails when the tuner cannot be made, the store cannot be read or
  // written, or required transfer learning fails; what was committed before stays committed.
  // After a stop request, returns with `interrupted` set once the batch in flight is committed.
  Result<TuneJobResult> run(builder::Builder& builder, runner::Runner& runner, store::Store& store,
                            const TuneJobEvents& events = {}, std::stop_token stop = {});

  const std::vector<TuneJobTask>& tasks() const { return tasks_; }
  const Target& target() const { return target_; }

 private:
  Status transfer(XgbTuner& tuner, const TuneJobTask& task, store::Store& store,
                  TuneTaskOutcome& outcome) const;

  std::vector<TuneJobTask> tasks_;
  Target target_;
  TuneJobOptions options_;
};

}  // namespace kiln::tuner
