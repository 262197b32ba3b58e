#include "runner/local_measure.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>

#include "common/stopwatch.h"
#include "ops/measured_layout.h"
#include "runtime/aligned_floats.h"
#include "runtime/artifact.h"

namespace kiln::runner {

namespace {

// A kernel argument or workspace: `size` floats and a cache line of slack, allocated as a
// model's buffers are (runtime/aligned_floats.h).
struct AlignedBuffer {
  explicit AlignedBuffer(int64_t n) : size(n), data(allocate_floats(n * 4 + 64)) {}
  int64_t size;
  AlignedFloats data;
};

}  // namespace

ReferenceData make_reference(const ops::Template& tmpl, const ops::Workload& w, uint64_t seed) {
  ReferenceData data;
  uint64_t k = 0;
  for (const ops::TensorSpec& t : tmpl.inputs(w)) {
    std::mt19937_64 rng(seed * 1000003 + k++);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(t.num_elements());
    for (float& x : v) x = dist(rng);
    data.inputs.push_back(std::move(v));
    data.input_shapes.push_back(t.shape);
  }
  for (const ops::TensorSpec& t : tmpl.outputs(w)) {
    data.outputs.emplace_back(t.num_elements());
    data.output_shapes.push_back(t.shape);
  }
  std::vector<const float*> in;
  for (auto& v : data.inputs) in.push_back(v.data());
  std::vector<float*> out;
  for (auto& v : data.outputs) out.push_back(v.data());
  tmpl.reference(w, in, out);
  return data;
}

const ReferenceData& ReferenceCache::get(const Task& task, uint64_t seed) {
  std::string key = task.key() + "|seed=" + std::to_string(seed);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    it = cache_.emplace(key, make_reference(*task.tmpl, task.workload, seed)).first;
  }
  return it->second;
}

double relative_error(const std::vector<float>& out, const std::vector<float>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double d = std::fabs(static_cast<double>(out[i]) - ref[i]);
    if (std::isnan(d)) return INFINITY;
    max_diff = std::max(max_diff, d);
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(ref[i])));
  }
  if (max_ref == 0) return max_diff == 0 ? 0 : INFINITY;
  return max_diff / max_ref;
}

MeasureResult run_built_kernel(const BuildResult& built, const ReferenceData& reference,
                               const MeasureOptions& options, ThreadPool& pool, bool timed) {
  MeasureResult out;
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](MeasureError e, std::string message) {
    out.error = e;
    out.message = std::move(message);
    out.run_seconds = seconds_since(start);
    out.timestamp = unix_seconds_now();
    return out;
  };
  // The artifact is native code: run only the bytes the builder vouched for.
  if (Status digest = built.verify_digest(); !digest.ok()) {
    return finish(MeasureError::kRuntimeDevice, digest.message());
  }
  const KernelManifest& m = built.manifest;
  if (m.num_inputs != static_cast<int>(reference.inputs.size()) ||
      m.num_outputs != static_cast<int>(reference.outputs.size()) ||
      m.buffer_elements.size() < reference.inputs.size() + reference.outputs.size() ||
      m.argument_shapes.size() != reference.inputs.size() + reference.outputs.size() ||
      reference.input_shapes.size() != reference.inputs.size() ||
      reference.output_shapes.size() != reference.outputs.size()) {
    return finish(MeasureError::kRuntimeDevice, "kernel arguments do not match the task's tensors");
  }
  auto artifact = Artifact::load_from_bytes(built.shared_object, m.name);
  if (!artifact.ok()) return finish(MeasureError::kRuntimeDevice, artifact.status().message());
  std::vector<kiln_stage_fn> stages, timed_stages;
  for (size_t i = 0; i < m.stages.size(); ++i) {
    Result<kiln_stage_fn> fn = (*artifact)->stage(m.stages[i]);
    if (!fn.ok()) return finish(MeasureError::kRuntimeDevice, fn.status().message());
    stages.push_back(*fn);
    if (m.stage_timed[i]) timed_stages.push_back(*fn);
  }

  std::vector<AlignedBuffer> storage;
  for (int64_t n : m.buffer_elements) storage.emplace_back(n);
  std::vector<float*> pointers;
  for (auto& s : storage) pointers.push_back(s.data.get());
  // The inputs in the layouts the kernel declares (ops/measured_layout.h).
  for (size_t i = 0; i < reference.inputs.size(); ++i) {
    Result<std::vector<float>> arg = ops::to_argument_layout(
        reference.inputs[i], reference.input_shapes[i], m.argument_shapes[i]);
    if (!arg.ok()) {
      return finish(MeasureError::kRuntimeDevice,
                    "input " + std::to_string(i) + ": " + arg.status().message());
    }
    if (static_cast<int64_t>(arg->size()) != storage[i].size) {
      return finish(MeasureError::kRuntimeDevice, "input " + std::to_string(i) + " size mismatch");
    }
    std::copy(arg->begin(), arg->end(), pointers[i]);
  }
  // Poison the outputs so that a kernel which skips elements cannot pass the check.
  for (int i = 0; i < m.num_outputs; ++i) {
    auto& b = storage[m.num_inputs + i];
    std::fill(b.data.get(), b.data.get() + b.size, std::nanf(""));
  }
  for (kiln_stage_fn fn : stages) fn(pointers.data(), pool.api());
  for (int i = 0; i < m.num_outputs; ++i) {
    const auto& b = storage[m.num_inputs + i];
    const std::vector<int64_t>& shape = m.argument_shapes[m.num_inputs + i];
    if (ops::TensorSpec{"", shape}.num_elements() != b.size) {
      return finish(MeasureError::kRuntimeDevice, "output " + std::to_string(i) + " size mismatch");
    }
    // Back to the template's layout for the comparison.
    Result<std::vector<float>> got =
        ops::from_argument_layout(b.data.get(), shape, reference.output_shapes[i]);
    if (!got.ok()) {
      return finish(MeasureError::kRuntimeDevice,
                    "output " + std::to_string(i) + ": " + got.status().message());
    }
    out.relative_error = std::max(out.relative_error, relative_error(*got, reference.outputs[i]));
  }
  if (!(out.relative_error <= options.tolerance)) {
    return finish(MeasureError::kWrongAnswer, "output differs from the reference: relative error " +
                                                  std::to_string(out.relative_error) + " > " +
                                                  std::to_string(options.tolerance));
  }
  if (timed) {
    // TVM's cache_flush_cpu_non_first_arg: every buffer but the first, the data, which in a
    // model the previous operator has just written (weights, outputs and the buffers of
    // untimed stages, e.g. pre-transformed weights, come from memory there).
    std::vector<FlushBuffer> flush;
    for (size_t i = 1; i < storage.size(); ++i) {
      flush.emplace_back(storage[i].data.get(), storage[i].size * sizeof(float));
    }
    float* const* args = pointers.data();
    const KilnRuntimeApi* api = pool.api();
    // The check just ran every stage on these buffers: that was the evaluator's warm-up call.
    TimeOptions time = options.time;
    time.warm_up = false;
    Result<std::vector<double>> costs = time_function(
        [&] {
          for (kiln_stage_fn fn : timed_stages) fn(args, api);
        },
        time, flush);
    if (!costs.ok()) return finish(MeasureError::kRuntimeDevice, costs.status().message());
    out.costs = autotvm_costs(*costs);
  }
  return finish(MeasureError::kNoError, "");
}

}  // namespace kiln::runner
