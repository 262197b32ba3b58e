#include "daemon/measure_gate.h"

namespace kiln::daemon {

void MeasureGate::acquire(int64_t priority) {
  std::unique_lock<std::mutex> lock(mu_);
  auto me = std::make_pair(-priority, next_ticket_++);
  waiting_.insert(me);
  cv_.wait(lock, [&] { return !held_ && *waiting_.begin() == me; });
  waiting_.erase(me);
  held_ = true;
}

void MeasureGate::release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
  }
  cv_.notify_all();
}

namespace {

class Hold {
 public:
  Hold(MeasureGate& gate, int64_t priority) : gate_(gate) { gate_.acquire(priority); }
  ~Hold() { gate_.release(); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  MeasureGate& gate_;
};

}  // namespace

GatedRunner::GatedRunner(runner::Runner& inner, MeasureGate& gate, int64_t priority)
    : inner_(inner), gate_(gate), priority_(priority) {
  Hooks forward;
  forward.before_kernel = [this] { before_kernel(); };
  forward.after_kernel = [this] { after_kernel(); };
  forward.idle = [this](double seconds) { idle(seconds); };
  inner_.set_hooks(std::move(forward));
}

std::vector<MeasureResult> GatedRunner::run(const std::vector<MeasureInput>& inputs,
                                            const std::vector<BuildResult>& builds) {
  Hold hold(gate_, priority_);
  return inner_.run(inputs, builds);
}

void GatedRunner::prepare(const MeasureInput& input) {
  Hold hold(gate_, priority_);
  inner_.prepare(input);
}

}  // namespace kiln::daemon
