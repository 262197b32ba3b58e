#include "builder/measure_input.h"

#include <chrono>

#include "builder/build.h"
#include "common/sha256.h"
#include "exchange/target_description.h"
#include "ops/measured_layout.h"

namespace kiln::builder {

BuildResult build_measure_input(const MeasureInput& input) {
  auto start = std::chrono::steady_clock::now();
  BuildResult out;
  auto finish = [&](MeasureError e, std::string message) {
    out.error = e;
    out.message = std::move(message);
    out.build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  const Task& task = input.task;
  // The program AutoTVM times for this config (ops/measured_layout.h).
  Result<ir::Program> program = ops::instantiate_measured(*task.tmpl, task.workload, input.config,
                                                          describe(task.target).template_info());
  if (!program.ok()) {
    return finish(program.status().code() == StatusCode::kInstantiation
                      ? MeasureError::kInstantiationError
                      : MeasureError::kCompileHost,
                  program.status().message());
  }
  Result<BuildOutput> built = build_program(*program, task.target);
  if (!built.ok()) return finish(MeasureError::kCompileHost, built.status().message());
  out.shared_object = std::move(built->shared_object);
  out.artifact_sha256 = sha256_hex(out.shared_object);
  out.manifest = KernelManifest::of(*program);
  return finish(MeasureError::kNoError, "");
}

}  // namespace kiln::builder
