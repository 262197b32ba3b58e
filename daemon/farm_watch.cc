#include "daemon/farm_watch.h"

#include <algorithm>

namespace kiln::daemon {

FarmWatch::FarmWatch(runner::Runner& inner, std::function<void(const std::string&)> lost)
    : inner_(inner), lost_(std::move(lost)) {
  Hooks forward;  // the tuning loop sets this runner's hooks; the inner one calls them
  forward.before_kernel = [this] { before_kernel(); };
  forward.after_kernel = [this] { after_kernel(); };
  forward.idle = [this](double seconds) { idle(seconds); };
  inner_.set_hooks(std::move(forward));
}

std::vector<MeasureResult> FarmWatch::run(const std::vector<MeasureInput>& inputs,
                                          const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results = inner_.run(inputs, builds);
  // Configs whose build failed never reached a runner; a batch of only those says nothing.
  bool any_sent = false, all_lost = true;
  for (size_t i = 0; i < results.size(); ++i) {
    if (builds[i].error != MeasureError::kNoError) continue;
    any_sent = true;
    all_lost = all_lost && results[i].runner_lost;
  }
  const std::string gone = inner_.lost();
  if (reason_.empty() && (!gone.empty() || (any_sent && all_lost))) {
    if (!gone.empty()) {
      reason_ = gone;
    } else {
      auto lost = std::find_if(results.begin(), results.end(),
                               [](const MeasureResult& m) { return m.runner_lost; });
      reason_ = "the farm's runners are gone: " + lost->message;
    }
    if (lost_) lost_(reason_);
  }
  return results;
}

}  // namespace kiln::daemon
