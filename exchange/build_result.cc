#include "exchange/build_result.h"

#include "common/sha256.h"
#include "exchange/wire_error.h"

namespace kiln {

KernelManifest KernelManifest::of(const ir::Program& program) {
  KernelManifest m;
  m.name = program.name;
  for (const ir::Buffer& b : program.buffers) m.buffer_elements.push_back(b->num_elements());
  const size_t arguments = static_cast<size_t>(program.num_inputs + program.num_outputs);
  for (size_t i = 0; i < arguments && i < program.buffers.size(); ++i) {
    m.argument_shapes.push_back(program.buffers[i]->shape);
  }
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
  w.u64(argument_shapes.size());
  for (const std::vector<int64_t>& shape : argument_shapes) {
    w.u64(shape.size());
    for (int64_t d : shape) w.i64(d);
  }
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
  uint64_t a = r.u64();
  for (uint64_t i = 0; i < a && r.ok(); ++i) {
    std::vector<int64_t> shape;
    uint64_t rank = r.u64();
    for (uint64_t j = 0; j < rank && r.ok(); ++j) shape.push_back(r.i64());
    m.argument_shapes.push_back(std::move(shape));
  }
  m.num_inputs = static_cast<int>(r.i64());
  m.num_outputs = static_cast<int>(r.i64());
  uint64_t s = r.u64();
  for (uint64_t i = 0; i < s && r.ok(); ++i) {
    m.stages.push_back(r.str());
    m.stage_timed.push_back(r.u64() != 0);
  }
  return m;
}

Status BuildResult::verify_digest() const {
  std::string actual = sha256_hex(shared_object);
  if (artifact_sha256 == actual) return Status::Ok();
  return RuntimeError("artifact of kernel '" + manifest.name +
                      "' does not match its digest: the builder vouched for sha256 " +
                      (artifact_sha256.empty() ? "(none)" : artifact_sha256) +
                      ", the bytes received hash to " + actual + "; not loading it");
}

void BuildResult::encode(wire::Writer& w) const {
  w.i64(static_cast<int64_t>(error));
  w.str(message);
  w.str(shared_object);
  w.str(artifact_sha256);
  manifest.encode(w);
  w.f64(build_seconds);
}

Result<BuildResult> BuildResult::decode(wire::Reader& r) {
  BuildResult b;
  int64_t error = r.i64();
  b.message = r.str();
  b.shared_object = r.str();
  b.artifact_sha256 = r.str();
  b.manifest = KernelManifest::decode(r);
  b.build_seconds = r.f64();
  KILN_ASSIGN_OR_RETURN(b.error, wire::decoded_error(r, error, "build result"));
  return b;
}

}  // namespace kiln
