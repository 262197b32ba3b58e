// Where a tuning run's time went, per task (schema version 6: the run_times table), so that a
// report can show it after the run ended or was killed.
//
// A run is one execution of `kiln tune` or of a daemon job (one TuneJob::run or ModelTuneJob::run
// call): its identity is made when it starts (tuner::unique_run_id: host/pid/random), so two
// executions of the same job (a daemon restarted) are two runs. The tuning loop adds to its row
// after every committed batch (Store::add_run_times): the row always holds what the
// committed part of the run spent. A task tuned in several rounds of one run (whole-model tuning)
// has one row, the sum of its rounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::store {

struct RunTimes {
  std::string run;     // the run's identity
  std::string target;  // the task: target, template name and workload (Task::key parts)
  std::string task_name;
  std::string workload;
  std::string source;  // the source of the records the run wrote ("kiln tune", a job's)
  double started = 0;  // unix seconds of the first row written (kept by later additions)
  double updated = 0;  // unix seconds of the latest addition
  int64_t trials = 0;  // records the run appended for the task
  int64_t errors = 0;  // of which failed (error_no != 0)
  double build_s = 0;  // waiting for the builders, wall
  double run_s = 0;    // the runner (checking, timing and cooldown), wall
  // Part of run_s spent in the runner's cooldowns, nullopt when the runner cannot tell (a
  // farm's runner cools down on its own machine; its cooldowns stay in run_s).
  std::optional<double> cooldown_s;
  double store_s = 0;  // committing records and renewing leases
  double wall_s = 0;   // the task's tuning loop, whole
  // The rest of the wall time: the tuner's search and model fits, bookkeeping.
  double tuner_s() const { return wall_s - build_s - run_s - store_s; }

  // Adds `more`'s trials, errors and seconds to these (the identity and times of day stay). The
  // cooldown stays known only while both are.
  void add(const RunTimes& more);
};

// The first number of `t` that is not finite and non-negative ("run_s", ...), or nullptr: what
// every backend refuses in Store::add_run_times.
const char* invalid_run_times_field(const RunTimes& t);

}  // namespace kiln::store
