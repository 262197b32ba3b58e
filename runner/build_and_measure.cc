#include "runner/build_and_measure.h"

#include "builder/measure_input.h"

namespace kiln::runner {

namespace {

MeasureResult build_and_run(const ops::Template& tmpl, const ops::Workload& w,
                            const ConfigEntity& config, const Target& target,
                            const MeasureOptions& options, ThreadPool& pool, bool timed) {
  BuildResult built = builder::build_measure_input({{&tmpl, w, target}, config});
  if (built.error != MeasureError::kNoError) return MeasureResult::of_failed_build(built);
  ReferenceData reference = make_reference(tmpl, w, options.input_seed);
  MeasureResult out = run_built_kernel(built, reference, options, pool, timed);
  out.build_seconds = built.build_seconds;
  return out;
}

}  // namespace

MeasureResult measure_config(const ops::Template& tmpl, const ops::Workload& w,
                             const ConfigEntity& config, const Target& target,
                             const MeasureOptions& options, ThreadPool& pool) {
  return build_and_run(tmpl, w, config, target, options, pool, true);
}

MeasureResult check_config(const ops::Template& tmpl, const ops::Workload& w,
                           const ConfigEntity& config, const Target& target,
                           const MeasureOptions& options, ThreadPool& pool) {
  return build_and_run(tmpl, w, config, target, options, pool, false);
}

}  // namespace kiln::runner
