#include "daemon/measure_gate.h"

namespace kiln::daemon {

bool MeasureGate::acquire(int64_t priority, std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  auto me = std::make_pair(-priority, next_ticket_++);
  waiting_.insert(me);
  bool got = cv_.wait(lock, stop, [&] { return !held_ && *waiting_.begin() == me; });
  waiting_.erase(me);
  if (got) {
    held_ = true;
  } else {
    cv_.notify_all();  // the next waiter may now be first
  }
  return got;
}

void MeasureGate::release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
  }
  cv_.notify_all();
}

MeasureGate::Load MeasureGate::load() {
  std::lock_guard<std::mutex> lock(mu_);
  return Load{static_cast<int64_t>(waiting_.size()), held_};
}

}  // namespace kiln::daemon
