#include "tuner/resume_rule.h"

namespace kiln::tuner {

bool ResumeRule::settles(const store::Record& r, bool found_at_start) const {
  if (!found_at_start || r.error_no == static_cast<int>(MeasureError::kNoError)) return true;
  if (retry_errors) return false;
  if (!store::is_environmental_failure(r)) return true;
  // A lost runner (or tracker) says nothing about the config, whatever the options.
  if (r.runner_lost) return false;
  return !measure_options.empty() && r.measure_options == measure_options;
}

}  // namespace kiln::tuner
