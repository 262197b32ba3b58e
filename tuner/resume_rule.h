// The resume rule: which records make a config "done" for a tuning run, so that the run never
// measures it (again) and counts it once toward its trial budget.
//
// Records are append-only: a failure is never deleted, so whether it condemns its config is
// decided here, each time a run starts. A record the run found in the store when it started:
//   - a success: done;
//   - a failure caused by the config (store::is_environmental_failure is false: a wrong answer,
//     a crashing kernel, a compile error...): done;
//   - a timeout (BUILD_TIMEOUT, RUN_TIMEOUT): done only when it was measured under the run's own
//     measure options (equal and non-empty); under other or unknown options (older records,
//     imported TVM logs) the config is measured again;
//   - RUNTIME_DEVICE of a lost runner (runner_lost: the runner or the farm's tracker was gone,
//     nothing ran): never done, the config is measured again;
//   - with retry_errors (`kiln tune --retry-errors`), no failure makes a config done: every
//     config whose records are all failures is measured again.
// A record appended while the run is going on (by the run itself or by a concurrent tuner of the
// same task) always makes its config done: a run measures each config at most once, and two
// concurrent runs never measure a config that one of them has recorded.
#pragma once

#include <string>

#include "store/record.h"

namespace kiln::tuner {

struct ResumeRule {
  std::string measure_options;  // the run's canonical measure options ("" = unknown)
  bool retry_errors = false;

  // Whether `record` makes its config done; `found_at_start`: it was in the store when the run
  // started (see above).
  bool settles(const store::Record& record, bool found_at_start) const;
};

}  // namespace kiln::tuner
