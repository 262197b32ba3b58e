// Building and measuring one config in this process: the builder (builder/measure_input.h) then
// the runner's check and timing (runner/local_measure.h). `kiln measure`'s tests, the benchmarks
// and the operator tests use it; it is its own library (kiln_build_and_measure) so that the
// runner library itself does not link the builder or LLVM (a device-side runner measures
// artifacts built elsewhere).
#pragma once

#include "exchange/measure_result.h"
#include "ops/template.h"
#include "runner/local_measure.h"
#include "runtime/thread_pool.h"

namespace kiln::runner {

// Builds and measures one config in this process (build errors are results, as in
// run_built_kernel: an invalid config is kInstantiationError, a failed build kCompileHost).
MeasureResult measure_config(const ops::Template& tmpl, const ops::Workload& w,
                             const ConfigEntity& config, const Target& target,
                             const MeasureOptions& options, ThreadPool& pool);

// The same without timing: builds, runs once and compares with the reference.
MeasureResult check_config(const ops::Template& tmpl, const ops::Workload& w,
                           const ConfigEntity& config, const Target& target,
                           const MeasureOptions& options, ThreadPool& pool);

}  // namespace kiln::runner
