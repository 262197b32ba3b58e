// Measuring one config in this process: instantiate the template, build, load, check the
// output against the operator's reference, and time the timed stages with AutoTVM's semantics.
// (Process isolation for untrusted or crashing kernels sits on top of this.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "builder/target.h"
#include "common/status.h"
#include "ops/template.h"
#include "runtime/thread_pool.h"
#include "runtime/time_evaluator.h"

namespace kiln::runner {

// AutoTVM's MeasureErrorNo (autotvm.md §3). Values are stored in records: do not change them.
enum class MeasureError : int {
  kNoError = 0,
  kInstantiationError = 1,
  kCompileHost = 2,
  kCompileDevice = 3,
  kRuntimeDevice = 4,
  kWrongAnswer = 5,
  kBuildTimeout = 6,
  kRunTimeout = 7,
  kUnknownError = 8,
};
const char* measure_error_name(MeasureError e);

struct MeasureOptions {
  TimeOptions time;         // number, repeat, min_repeat_ms, enable_cpu_cache_flush
  uint64_t input_seed = 0;  // inputs are uniform in [-1, 1), deterministic per seed
  double tolerance = 1e-4;  // max |out - ref| / max |ref| for a correct answer
};

struct MeasureOutcome {
  MeasureError error = MeasureError::kNoError;
  std::string message;        // why it failed; empty on success
  std::vector<double> costs;  // seconds per run, after AutoTVM's drop-min/max rule
  double relative_error = 0;  // of the checked output
  double build_ms = 0;
  double run_ms = 0;  // checking + timing wall time
};

// Random but deterministic inputs for a template's tensors (one vector per input).
std::vector<std::vector<float>> make_inputs(const ops::Template& tmpl, const ops::Workload& w,
                                            uint64_t seed);

// max |a - b| / max |b| over all elements (0 when b is all zero and a equals it).
double relative_error(const std::vector<float>& out, const std::vector<float>& ref);

// Builds and measures one config. Never fails: every problem is an outcome with its AutoTVM
// error code (instantiation 1, compile 2, runtime 4, wrong answer 5).
MeasureOutcome measure_config(const ops::Template& tmpl, const ops::Workload& w,
                              const ops::ConfigEntity& config, const builder::Target& target,
                              const MeasureOptions& options, ThreadPool& pool);

// The same without timing: builds, runs once and compares with the reference.
MeasureOutcome check_config(const ops::Template& tmpl, const ops::Workload& w,
                            const ops::ConfigEntity& config, const builder::Target& target,
                            const MeasureOptions& options, ThreadPool& pool);

}  // namespace kiln::runner
