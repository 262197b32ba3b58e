#include "runtime/time_evaluator.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kiln {
namespace {

// TVM's limit_zero_time_iterations: a clock that keeps reading zero will never reach
// min_repeat_ms, so stop growing after this many zero readings.
constexpr int kLimitZeroTimeIterations = 100;

#if defined(__x86_64__) || defined(__i386__)
constexpr uintptr_t kCacheLine = 64;  // every x86-64 CPU's
#endif

}  // namespace

int grow_number(int number, double elapsed_ms, int min_repeat_ms) {
  constexpr double kGoldenRatio = 1.618;
  const double per_call_ms = elapsed_ms / number;
  const double next = std::max(min_repeat_ms / per_call_ms + 1, number * kGoldenRatio);
  // TVM truncates with static_cast<int>; saturate instead of overflowing.
  if (!(next < static_cast<double>(INT_MAX))) return INT_MAX;
  return static_cast<int>(next);
}

Status flush_cpu_cache(const std::vector<FlushBuffer>& buffers) {
#if defined(__x86_64__) || defined(__i386__)
  for (const auto& [data, size] : buffers) {
    if (data == nullptr || size == 0) continue;
    // Start at the line holding the first byte, so an unaligned span is covered entirely.
    const uintptr_t first = reinterpret_cast<uintptr_t>(data) & ~(kCacheLine - 1);
    const uintptr_t last = reinterpret_cast<uintptr_t>(data) + size;
    for (uintptr_t p = first; p < last; p += kCacheLine) {
      _mm_clflush(reinterpret_cast<const void*>(p));
    }
  }
  _mm_mfence();
  return Status::Ok();
#elif defined(__aarch64__)
  // The smallest data cache line of any level (CTR_EL0.DminLine, in words): a 64-byte step
  // would skip lines on a core with smaller ones.
  uint64_t ctr = 0;
  asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
  const uintptr_t line = uintptr_t{4} << ((ctr >> 16) & 0xf);
  for (const auto& [data, size] : buffers) {
    if (data == nullptr || size == 0) continue;
    const uintptr_t first = reinterpret_cast<uintptr_t>(data) & ~(line - 1);
    const uintptr_t last = reinterpret_cast<uintptr_t>(data) + size;
    for (uintptr_t p = first; p < last; p += line) {
      asm volatile("dc civac, %0" ::"r"(p) : "memory");
    }
  }
  asm volatile("dsb ish" ::: "memory");
  return Status::Ok();
#else
  if (buffers.empty()) return Status::Ok();
  return InvalidArgument("CPU cache flush is not supported on this architecture");
#endif
}

Result<std::vector<double>> time_function(const std::function<void()>& f,
                                          const TimeOptions& options,
                                          const std::vector<FlushBuffer>& flush_buffers) {
  if (!f) return InvalidArgument("time_function: no function to time");
  if (options.number < 1 || options.repeat < 1 || options.min_repeat_ms < 0) {
    return InvalidArgument(
        "time_function: need number >= 1, repeat >= 1, min_repeat_ms >= 0; got " +
        std::to_string(options.number) + ", " + std::to_string(options.repeat) + ", " +
        std::to_string(options.min_repeat_ms));
  }
  using Clock = std::chrono::steady_clock;

  if (options.warm_up) f();

  int number = options.number;
  std::vector<double> costs;
  costs.reserve(options.repeat);
  for (int i = 0; i < options.repeat; ++i) {
    // As in TVM, the flush precedes the repeat, not each retry of it.
    if (options.enable_cpu_cache_flush) KILN_RETURN_IF_ERROR(flush_cpu_cache(flush_buffers));
    double elapsed_ms = 0.0;
    int zero_readings = 0;
    do {
      if (elapsed_ms > 0.0) number = grow_number(number, elapsed_ms, options.min_repeat_ms);
      const Clock::time_point start = Clock::now();
      for (int j = 0; j < number; ++j) f();
      const Clock::time_point stop = Clock::now();
      const int64_t nanos =
          std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
      if (nanos == 0) ++zero_readings;
      elapsed_ms = static_cast<double>(nanos) / 1e6;
    } while (elapsed_ms < options.min_repeat_ms && zero_readings < kLimitZeroTimeIterations);
    costs.push_back(elapsed_ms / 1e3 / number);
  }
  return costs;
}

std::vector<double> autotvm_costs(std::vector<double> costs) {
  if (costs.size() > 2) {
    std::sort(costs.begin(), costs.end());
    costs.erase(costs.begin());
    costs.pop_back();
  }
  return costs;
}

}  // namespace kiln
