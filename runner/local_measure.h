// Checking and timing a built kernel in this process: load the artifact, run every stage on
// deterministic random inputs, compare the outputs with the operator's reference, then time the
// timed stages with AutoTVM's semantics. The isolated runner (local_runner.h) calls this inside
// a child process; `kiln measure`, the benchmarks and the tests call it directly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/measure_error.h"
#include "exchange/build_result.h"
#include "exchange/measure_result.h"
#include "exchange/task.h"
#include "ops/template.h"
#include "runtime/thread_pool.h"
#include "runtime/time_evaluator.h"

namespace kiln::runner {

struct MeasureOptions {
  TimeOptions time;         // number, repeat, min_repeat_ms, enable_cpu_cache_flush
  uint64_t input_seed = 0;  // inputs are uniform in [-1, 1), deterministic per seed
  double tolerance = 1e-4;  // max |out - ref| / max |ref| for a correct answer
};

// Random but deterministic inputs for a template's tensors, and the reference outputs for them,
// in the template's layout (Template::inputs / outputs, whose shapes are kept). A kernel whose
// arguments are in other layouts (ops/measured_layout.h: the NCHWc convolutions take packed data
// and write a packed output) gets the inputs converted to its argument shapes, and its outputs
// are converted back before the comparison.
struct ReferenceData {
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<float>> outputs;
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<std::vector<int64_t>> output_shapes;
};
ReferenceData make_reference(const ops::Template& tmpl, const ops::Workload& w, uint64_t seed);

// Reference data per (task, seed), computed once: the reference implementations are slow, and a
// tuning run checks hundreds of configs of one workload.
class ReferenceCache {
 public:
  const ReferenceData& get(const Task& task, uint64_t seed);

 private:
  std::map<std::string, ReferenceData> cache_;
};

// max |a - b| / max |b| over all elements (0 when b is all zero and a equals it).
double relative_error(const std::vector<float>& out, const std::vector<float>& ref);

// Loads `built`, checks it against `reference` and (if `timed`) times it. The checking call
// runs right before the timing on the same buffers and serves as the time evaluator's warm-up
// call, so a config costs 1 + repeat * number kernel calls, as in AutoTVM. Never fails: an
// artifact that does not hash to its digest (it is then not loaded) or fails to load is
// kRuntimeDevice, a mismatch kWrongAnswer. A crash or hang of the kernel takes this
// process with it: call it in an isolated process for kernels you do not trust.
MeasureResult run_built_kernel(const BuildResult& built, const ReferenceData& reference,
                               const MeasureOptions& options, ThreadPool& pool, bool timed);

}  // namespace kiln::runner
