// Elapsed wall time on the monotonic clock, in seconds: the one definition the tuner, the cost
// model and the runners time their phases with.
#pragma once

#include <chrono>

namespace kiln {

// Seconds from `start` to now on std::chrono::steady_clock (never negative: the clock is
// monotonic).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln
