#include "runner/local_measure.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>

#include "builder/build.h"
#include "runtime/artifact.h"

namespace kiln::runner {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// 64-byte aligned float storage: vector loads of kernels never straddle cache lines needlessly.
struct AlignedBuffer {
  explicit AlignedBuffer(int64_t n)
      : size(n),
        data(static_cast<float*>(std::aligned_alloc(64, ((n * 4 + 63) / 64) * 64 + 64)),
             &std::free) {}
  int64_t size;
  std::unique_ptr<float, decltype(&std::free)> data;
};

MeasureOutcome run(const ops::Template& tmpl, const ops::Workload& w,
                   const ops::ConfigEntity& config, const builder::Target& target,
                   const MeasureOptions& options, ThreadPool& pool, bool timed) {
  MeasureOutcome out;
  auto start = std::chrono::steady_clock::now();
  ops::TargetInfo info{target.simd_lanes()};
  Result<ir::Program> program = tmpl.instantiate(w, config, info);
  if (!program.ok()) {
    out.error = program.status().code() == StatusCode::kInstantiation
                    ? MeasureError::kInstantiationError
                    : MeasureError::kCompileHost;
    out.message = program.status().message();
    return out;
  }
  Result<builder::BuildOutput> built = builder::build_program(*program, target);
  out.build_ms = ms_since(start);
  if (!built.ok()) {
    out.error = MeasureError::kCompileHost;
    out.message = built.status().message();
    return out;
  }

  start = std::chrono::steady_clock::now();
  auto artifact = Artifact::load_from_bytes(built->shared_object, program->name);
  if (!artifact.ok()) {
    out.error = MeasureError::kRuntimeDevice;
    out.message = artifact.status().message();
    return out;
  }
  std::vector<kiln_stage_fn> stages, timed_stages;
  for (const ir::Stage& s : program->stages) {
    Result<kiln_stage_fn> fn = (*artifact)->stage(s.name);
    if (!fn.ok()) {
      out.error = MeasureError::kRuntimeDevice;
      out.message = fn.status().message();
      return out;
    }
    stages.push_back(*fn);
    if (s.timed) timed_stages.push_back(*fn);
  }

  std::vector<std::vector<float>> inputs = make_inputs(tmpl, w, options.input_seed);
  std::vector<AlignedBuffer> storage;
  for (const ir::Buffer& b : program->buffers) storage.emplace_back(b->num_elements());
  std::vector<float*> pointers;
  for (auto& s : storage) pointers.push_back(s.data.get());
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::copy(inputs[i].begin(), inputs[i].end(), pointers[i]);
  }
  // Poison the outputs so a kernel that skips elements cannot pass the check.
  for (int i = 0; i < program->num_outputs; ++i) {
    auto& b = storage[program->num_inputs + i];
    std::fill(b.data.get(), b.data.get() + b.size, std::nanf(""));
  }
  for (kiln_stage_fn fn : stages) fn(pointers.data(), pool.api());

  std::vector<std::vector<float>> refs;
  std::vector<const float*> in_ptrs;
  for (auto& v : inputs) in_ptrs.push_back(v.data());
  std::vector<float*> ref_ptrs;
  for (const ops::TensorSpec& t : tmpl.outputs(w)) refs.emplace_back(t.num_elements());
  for (auto& v : refs) ref_ptrs.push_back(v.data());
  tmpl.reference(w, in_ptrs, ref_ptrs);
  for (size_t i = 0; i < refs.size(); ++i) {
    const auto& b = storage[program->num_inputs + i];
    std::vector<float> got(b.data.get(), b.data.get() + b.size);
    out.relative_error = std::max(out.relative_error, relative_error(got, refs[i]));
  }
  if (!(out.relative_error <= options.tolerance)) {
    out.error = MeasureError::kWrongAnswer;
    out.message = "output differs from the reference: relative error " +
                  std::to_string(out.relative_error) + " > " + std::to_string(options.tolerance);
    out.run_ms = ms_since(start);
    return out;
  }
  if (timed) {
    std::vector<std::pair<const void*, size_t>> flush;
    for (size_t i = 0; i < storage.size(); ++i) {
      if (static_cast<int>(i) >= program->num_inputs &&
          static_cast<int>(i) < program->num_inputs + program->num_outputs) {
        continue;  // like TVM's cache_flush_cpu_non_first_arg: inputs only
      }
      flush.emplace_back(storage[i].data.get(), storage[i].size * sizeof(float));
    }
    float* const* args = pointers.data();
    const KilnRuntimeApi* api = pool.api();
    Result<std::vector<double>> costs = time_function(
        [&] {
          for (kiln_stage_fn fn : timed_stages) fn(args, api);
        },
        options.time, flush);
    if (!costs.ok()) {
      out.error = MeasureError::kRuntimeDevice;
      out.message = costs.status().message();
    } else {
      out.costs = autotvm_costs(*costs);
    }
  }
  out.run_ms = ms_since(start);
  return out;
}

}  // namespace

const char* measure_error_name(MeasureError e) {
  switch (e) {
    case MeasureError::kNoError:
      return "NO_ERROR";
    case MeasureError::kInstantiationError:
      return "INSTANTIATION_ERROR";
    case MeasureError::kCompileHost:
      return "COMPILE_HOST";
    case MeasureError::kCompileDevice:
      return "COMPILE_DEVICE";
    case MeasureError::kRuntimeDevice:
      return "RUNTIME_DEVICE";
    case MeasureError::kWrongAnswer:
      return "WRONG_ANSWER";
    case MeasureError::kBuildTimeout:
      return "BUILD_TIMEOUT";
    case MeasureError::kRunTimeout:
      return "RUN_TIMEOUT";
    case MeasureError::kUnknownError:
      return "UNKNOWN_ERROR";
  }
  return "UNKNOWN_ERROR";
}

std::vector<std::vector<float>> make_inputs(const ops::Template& tmpl, const ops::Workload& w,
                                            uint64_t seed) {
  std::vector<std::vector<float>> inputs;
  uint64_t k = 0;
  for (const ops::TensorSpec& t : tmpl.inputs(w)) {
    std::mt19937_64 rng(seed * 1000003 + k++);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(t.num_elements());
    for (float& x : v) x = dist(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
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

MeasureOutcome measure_config(const ops::Template& tmpl, const ops::Workload& w,
                              const ops::ConfigEntity& config, const builder::Target& target,
                              const MeasureOptions& options, ThreadPool& pool) {
  return run(tmpl, w, config, target, options, pool, true);
}

MeasureOutcome check_config(const ops::Template& tmpl, const ops::Workload& w,
                            const ops::ConfigEntity& config, const builder::Target& target,
                            const MeasureOptions& options, ThreadPool& pool) {
  return run(tmpl, w, config, target, options, pool, false);
}

}  // namespace kiln::runner
