#include "common/env.h"

#include <thread>

namespace kiln {

namespace {

class RealEnv final : public Env {
 public:
  Clock::time_point now() override { return Clock::now(); }
  void sleep_for(double seconds) override {
    if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  Result<std::unique_ptr<WorkerProcess>> spawn_worker(
      const std::function<void(int, int)>& serve) override {
    return WorkerProcess::spawn(serve);
  }
};

}  // namespace

Env& Env::real() {
  static RealEnv env;
  return env;
}

Env::Clock::time_point time_after(Env::Clock::time_point t, double seconds) {
  double room = seconds_between(t, Env::Clock::time_point::max());
  if (seconds >= room) return Env::Clock::time_point::max();
  return t + std::chrono::duration_cast<Env::Clock::duration>(
                 std::chrono::duration<double>(std::max(0.0, seconds)));
}

}  // namespace kiln
