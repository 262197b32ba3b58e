// Timing a kernel with the semantics of TVM's time evaluator (WrapTimeEvaluator in
// src/runtime/profiling.cc) as AutoTVM drives it, so that kiln's costs compare with TVM's
// (reference/autotvm.md §8).
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "common/status.h"

namespace kiln {

struct TimeOptions {
  // Calls per timed loop (AutoTVM's runner default; TVM's own default is 10). May grow, see
  // min_repeat_ms.
  int number = 4;
  // Timed loops; each yields one cost.
  int repeat = 3;
  // When a timed loop takes less than this, `number` grows and the loop is timed again; the grown
  // `number` carries over to later repeats. 0 disables growth.
  int min_repeat_ms = 0;
  // Flush the given buffers out of the CPU caches before each repeat (AutoTVM's
  // enable_cpu_cache_flush, which flushes every argument but the first).
  bool enable_cpu_cache_flush = false;
  // The untimed first call (first-touch page faults, lazy binding, instruction cache). A caller
  // that has just called f on the same buffers (kiln's runner checks every kernel's output
  // right before timing it) turns it off: that call already was the warm-up.
  bool warm_up = true;
  // There is deliberately no cooldown here: AutoTVM's cooldown_interval is a sleep the runner
  // takes after each config, not something the evaluator does between repeats (AutoTVM leaves
  // the evaluator's own cooldown at 0). The runner owns it.
};

// A span of memory to flush: (start, size in bytes).
using FlushBuffer = std::pair<const void*, size_t>;

// Times `f` (one call = one run of the kernel) and returns `repeat` costs in seconds per call:
//   - one untimed warm-up call (unless options.warm_up is false);
//   - then `repeat` times: flush the caches if enabled, time `number` back-to-back calls with a
//     steady clock; while that took less than min_repeat_ms, grow `number` (grow_number) and time
//     again (giving up after 100 readings of exactly zero); cost = elapsed / number.
// So f runs 1 + (sum of every timed loop's number) times; with min_repeat_ms == 0 exactly
// 1 + repeat * number times (one fewer without the warm-up). kInvalidArgument if number or repeat <
// 1, min_repeat_ms < 0, f is empty, or a flush is asked for on an architecture without one.
Result<std::vector<double>> time_function(const std::function<void()>& f,
                                          const TimeOptions& options,
                                          const std::vector<FlushBuffer>& flush_buffers);

// The next `number` after a timed loop of `number` calls took elapsed_ms < min_repeat_ms:
// max(min_repeat_ms / (elapsed_ms / number) + 1, number * 1.618), truncated (TVM's formula;
// the golden ratio keeps growth geometric when the estimate is poor). Saturates at INT_MAX.
// REQUIRES: elapsed_ms > 0, number >= 1.
int grow_number(int number, double elapsed_ms, int min_repeat_ms);

// Evicts every cache line of the buffers from all cache levels (clflush per line, then a fence
// so later timed loads see the flushed state). kInvalidArgument where unsupported.
Status flush_cpu_cache(const std::vector<FlushBuffer>& buffers);

// AutoTVM's post-processing of the evaluator's costs (run_through_rpc): with more than 2 values,
// sorts them and drops the smallest and the largest (repeat=3 leaves the median); otherwise
// returns them unchanged.
std::vector<double> autotvm_costs(std::vector<double> costs);

}  // namespace kiln
