#include "builder/measure_input.h"

#include <chrono>

#include "builder/build.h"

namespace kiln::builder {

KernelManifest KernelManifest::of(const ir::Program& program) {
  KernelManifest m;
  m.name = program.name;
  for (const ir::Buffer& b : program.buffers) m.buffer_elements.push_back(b->num_elements());
  m.num_inputs = program.num_inputs;
  m.num_outputs = program.num_outputs;
  for (const ir::Stage& s : program.stages) {
    m.stages.push_back(s.name);
    m.stage_timed.push_back(s.timed);
  }
  return m;
}

void KernelManifest::encode(wire::Writer& w) const {
  w.str(name);
  w.u64(buffer_elements.size());
  for (int64_t n : buffer_elements) w.i64(n);
  w.i64(num_inputs);
  w.i64(num_outputs);
  w.u64(stages.size());
  for (size_t i = 0; i < stages.size(); ++i) {
    w.str(stages[i]);
    w.u64(stage_timed[i] ? 1 : 0);
  }
}

KernelManifest KernelManifest::decode(wire::Reader& r) {
  KernelManifest m;
  m.name = r.str();
  uint64_t n = r.u64();
  for (uint64_t i = 0; i < n && r.ok(); ++i) m.buffer_elements.push_back(r.i64());
  m.num_inputs = static_cast<int>(r.i64());
  m.num_outputs = static_cast<int>(r.i64());
  uint64_t s = r.u64();
  for (uint64_t i = 0; i < s && r.ok(); ++i) {
    m.stages.push_back(r.str());
    m.stage_timed.push_back(r.u64() != 0);
  }
  return m;
}

void BuildResult::encode(wire::Writer& w) const {
  w.i64(static_cast<int64_t>(error));
  w.str(message);
  w.str(shared_object);
  manifest.encode(w);
  w.f64(build_seconds);
}

BuildResult BuildResult::decode(wire::Reader& r) {
  BuildResult b;
  b.error = static_cast<MeasureError>(r.i64());
  b.message = r.str();
  b.shared_object = r.str();
  b.manifest = KernelManifest::decode(r);
  b.build_seconds = r.f64();
  if (!r.ok()) {
    b = BuildResult{};
    b.error = MeasureError::kCompileHost;
    b.message = "malformed reply from a builder worker";
  }
  return b;
}

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
  Result<ir::Program> program =
      input.tmpl->instantiate(input.workload, input.config, {input.target.simd_lanes()});
  if (!program.ok()) {
    return finish(program.status().code() == StatusCode::kInstantiation
                      ? MeasureError::kInstantiationError
                      : MeasureError::kCompileHost,
                  program.status().message());
  }
  Result<BuildOutput> built = build_program(*program, input.target);
  if (!built.ok()) return finish(MeasureError::kCompileHost, built.status().message());
  out.shared_object = std::move(built->shared_object);
  out.manifest = KernelManifest::of(*program);
  return finish(MeasureError::kNoError, "");
}

}  // namespace kiln::builder
