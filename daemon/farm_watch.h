// A daemon job that measures on a farm fails, alone and with the reason, when the farm's runners
// are gone: a batch in which every config came back runner_lost (no runner of the key came free
// within the wait, or every runner died under it; runner/remote_runner.h) stops the job instead
// of letting it record such errors round after round; so does a batch after which the runner
// says it is lost (Runner::lost: the tracker is gone). The batch itself is recorded as usual.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runner/runner.h"

namespace kiln::daemon {

class FarmWatch : public runner::Runner {
 public:
  // `inner` (the job's RemoteRunner) must outlive this. `lost` is called once, from run(), with
  // the reason, when a batch is lost whole; the job is expected to stop after it.
  FarmWatch(runner::Runner& inner, std::function<void(const std::string& reason)> lost);

  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                 const std::vector<BuildResult>& builds) override;
  void prepare(const MeasureInput& input) override { inner_.prepare(input); }
  std::optional<double> cooldown_seconds() const override { return inner_.cooldown_seconds(); }
  std::string lost() const override { return reason_; }

  // Why the farm was given up ("" while it was not).
  const std::string& reason() const { return reason_; }

 private:
  runner::Runner& inner_;
  std::function<void(const std::string&)> lost_;
  std::string reason_;
};

}  // namespace kiln::daemon
