#include "runtime/graph_executor.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "runtime/aligned_floats.h"
#include "runtime/artifact.h"
#include "runtime/memory_plan.h"
#include "runtime/thread_pool.h"

namespace kiln {

namespace {

// A model's header names the values a step passes; the code says what its stage touches. A
// header that passes no buffer, or a smaller one, where the stage reads or writes would have
// the kernel dereference null or run off the end of the buffer.
Status CheckStepBuffers(const ModelArtifact& model, size_t s, const uint64_t* table,
                        const std::string& label) {
  const ModelStep& step = model.steps[s];
  const std::string where = label + ": step " + std::to_string(s) + " ('" + step.label + "')";
  constexpr uint64_t kMaxBuffers = 1 << 16;
  if (table[0] > kMaxBuffers) {
    return InvalidArgument(where + ": its stage '" + step.symbol + "' claims " +
                           std::to_string(table[0]) + " buffers");
  }
  for (uint64_t b = 0; b < table[0]; ++b) {
    const uint64_t needed = table[1 + b];
    if (needed == 0) continue;
    const int id = b < step.buffers.size() ? step.buffers[b] : -1;
    if (id < 0) {
      return InvalidArgument(where + " passes no value as buffer " + std::to_string(b) +
                             ", which its stage '" + step.symbol + "' uses");
    }
    const uint64_t floats = static_cast<uint64_t>(std::max<int64_t>(1, model.values[id].floats()));
    if (floats < needed) {
      return InvalidArgument(where + " passes value " + std::to_string(id) + " ('" +
                             model.values[id].name + "') of " + std::to_string(floats) +
                             " floats as buffer " + std::to_string(b) + ", which its stage '" +
                             step.symbol + "' uses " + std::to_string(needed) + " floats of");
    }
  }
  return Status::Ok();
}

}  // namespace

int64_t TensorInfo::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

struct GraphExecutor::Impl {
  ModelArtifact model;
  std::string label;
  std::unique_ptr<Artifact> artifact;
  std::unique_ptr<ThreadPool> pool;
  std::vector<kiln_stage_fn> stages;           // per step
  std::vector<std::vector<float*>> step_args;  // per step: its buffers' storage
  std::vector<size_t> arg_counts;              // per step: the slots its stage reads
  std::vector<float*> storage;                 // per value: where its elements live
  std::vector<AlignedFloats> owned;            // input and output buffers
  AlignedFloats constants;
  AlignedFloats arena;
  int64_t arena_bytes = 0;
  int64_t unplanned_bytes = 0;
  std::vector<TensorInfo> inputs, outputs;

  Status Plan();
};

// Gives every value its storage: own buffers for inputs and outputs, the aligned copy of the
// blob for constants, planned arena slots for intermediates, the root's storage for views.
Status GraphExecutor::Impl::Plan() {
  const int num_values = static_cast<int>(model.values.size());
  const int num_steps = static_cast<int>(model.steps.size());
  std::vector<ViewRoot> view_root(num_values);
  std::vector<int> root(num_values);
  for (int id = 0; id < num_values; ++id) {
    view_root[id] = resolve_view(model.values, id);
    root[id] = view_root[id].value;
  }

  // Liveness of intermediates: from the first step touching them (through any view) to the
  // last. Steps do not say which buffers they write, but a value is written before it is read,
  // so its first use is its first write.
  std::vector<int> first(num_values, -1), last(num_values, -1);
  for (int s = 0; s < num_steps; ++s) {
    for (int id : model.steps[s].buffers) {
      if (id < 0) continue;
      const int r = root[id];
      if (first[r] < 0) first[r] = s;
      last[r] = s;
    }
  }
  // Each output must be computed by some step, unless it is (a view of) data the model has or
  // has no elements.
  for (int id : model.outputs) {
    const ModelValueKind kind = model.values[root[id]].kind;
    if (kind != ModelValueKind::kInput && kind != ModelValueKind::kConstant &&
        model.values[id].num_elements() > 0 && first[root[id]] < 0) {
      return InvalidArgument(label + ": output '" + model.values[id].name +
                             "' is not written by any step");
    }
    // An intermediate that is also read back after run() must survive every later step.
    if (kind == ModelValueKind::kIntermediate) last[root[id]] = num_steps;
  }

  std::vector<int> planned;  // value ids of the intermediates given arena slots
  std::vector<LiveBuffer> live;
  for (int id = 0; id < num_values; ++id) {
    if (model.values[id].kind != ModelValueKind::kIntermediate || first[id] < 0) continue;
    planned.push_back(id);
    // An empty tensor still gets one element's storage: kernels never touch it.
    live.push_back({std::max<int64_t>(1, model.values[id].num_elements()) *
                        static_cast<int64_t>(sizeof(float)),
                    first[id], last[id]});
  }
  const MemoryPlan plan = plan_memory(live);
  arena_bytes = plan.arena_bytes;
  unplanned_bytes = plan.unplanned_bytes;
  // A header may claim shapes no machine holds (validate_model bounds each value only to 2^42
  // elements, against overflow): refuse what exceeds this machine's memory rather than die
  // allocating it.
  const int64_t memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  int64_t needed = arena_bytes + static_cast<int64_t>(model.constants.size() * sizeof(float));
  for (int id = 0; id < num_values; ++id) {
    const ModelValue& v = model.values[id];
    if (v.kind == ModelValueKind::kInput || v.kind == ModelValueKind::kOutput ||
        (v.kind == ModelValueKind::kIntermediate && first[id] < 0)) {
      needed += std::max<int64_t>(1, v.num_elements()) * static_cast<int64_t>(sizeof(float));
      if (needed > memory) break;  // each term is at most 2^44: no overflow before this
    }
  }
  if (needed > memory) {
    return InvalidArgument(label + ": its values need " + std::to_string(needed) +
                           " bytes of memory, more than this machine's " + std::to_string(memory));
  }
  arena = allocate_floats(arena_bytes);

  constants = allocate_floats(static_cast<int64_t>(model.constants.size() * sizeof(float)));
  std::copy(model.constants.begin(), model.constants.end(), constants.get());

  storage.assign(num_values, nullptr);
  for (size_t k = 0; k < planned.size(); ++k) {
    storage[planned[k]] = arena.get() + plan.offsets[k] / static_cast<int64_t>(sizeof(float));
  }
  for (int id = 0; id < num_values; ++id) {
    const ModelValue& v = model.values[id];
    if (v.kind == ModelValueKind::kInput || v.kind == ModelValueKind::kOutput ||
        (v.kind == ModelValueKind::kIntermediate && first[id] < 0)) {
      // Unused intermediates get a buffer too, so that no storage pointer is ever null.
      owned.push_back(allocate_floats(std::max<int64_t>(1, v.num_elements()) *
                                      static_cast<int64_t>(sizeof(float))));
      storage[id] = owned.back().get();
    } else if (v.kind == ModelValueKind::kConstant) {
      storage[id] = constants.get() + v.constant_offset;
    }
  }
  for (int id = 0; id < num_values; ++id) {
    storage[id] = storage[root[id]] + view_root[id].offset;
  }

  for (size_t s = 0; s < model.steps.size(); ++s) {
    // Every slot the stage's code reads a pointer from exists, null where it touches nothing.
    std::vector<float*> args(arg_counts[s], nullptr);
    for (size_t b = 0; b < model.steps[s].buffers.size(); ++b) {
      const int id = model.steps[s].buffers[b];
      if (id >= 0) args[b] = storage[id];
    }
    step_args.push_back(std::move(args));
  }
  return Status::Ok();
}

GraphExecutor::GraphExecutor() : impl_(std::make_unique<Impl>()) {}
GraphExecutor::~GraphExecutor() = default;

Result<std::unique_ptr<GraphExecutor>> GraphExecutor::create(ModelArtifact model, int threads,
                                                             std::string label) {
  // Validated again although parse_model did: a model may come straight from the compiler.
  KILN_RETURN_IF_ERROR(validate_model(model, label));
  if (Status s = check_cpu_features(model.cpu_features, model.target); !s.ok()) {
    return InvalidArgument(label + ": " + s.message());
  }
  std::unique_ptr<GraphExecutor> exec(new GraphExecutor());
  Impl& impl = *exec->impl_;
  impl.label = label;
  impl.model = std::move(model);
  // A model without steps (its outputs are constants) has no code to load.
  if (!impl.model.steps.empty() || !impl.model.shared_object.empty()) {
    auto artifact = Artifact::load_from_bytes(impl.model.shared_object, label);
    if (!artifact.ok()) {
      return Status::Error(artifact.status().code(),
                           label + ": loading its shared object: " + artifact.status().message());
    }
    impl.artifact = std::move(artifact).value();
  }
  for (size_t s = 0; s < impl.model.steps.size(); ++s) {
    const ModelStep& step = impl.model.steps[s];
    auto fn = impl.artifact->stage(step.symbol);
    if (!fn.ok()) {
      return RuntimeError(label + ": step " + std::to_string(s) + " ('" + step.label +
                          "'): the shared object exports no symbol '" + step.symbol + "'");
    }
    impl.stages.push_back(*fn);
    size_t count = step.buffers.size();
    if (const uint64_t* table = impl.artifact->buffer_table(step.symbol)) {
      KILN_RETURN_IF_ERROR(CheckStepBuffers(impl.model, s, table, label));
      count = std::max<size_t>(count, table[0]);
    }
    impl.arg_counts.push_back(count);
  }
  KILN_RETURN_IF_ERROR(impl.Plan());
  for (int id : impl.model.inputs) {
    impl.inputs.push_back({impl.model.values[id].name, impl.model.values[id].shape});
  }
  for (int id : impl.model.outputs) {
    impl.outputs.push_back(
        {impl.model.values[id].name, impl.model.values[id].shape, impl.model.values[id].dtype});
  }
  impl.pool = std::make_unique<ThreadPool>(threads);
  if (Status s = impl.pool->start_status(); !s.ok())
    return RuntimeError(label + ": " + s.message());
  return exec;
}

int GraphExecutor::num_inputs() const { return static_cast<int>(impl_->inputs.size()); }
int GraphExecutor::num_outputs() const { return static_cast<int>(impl_->outputs.size()); }

const TensorInfo& GraphExecutor::input_info(int i) const {
  KILN_CHECK(i >= 0 && i < num_inputs()) << "input " << i << " of " << num_inputs();
  return impl_->inputs[i];
}

const TensorInfo& GraphExecutor::output_info(int i) const {
  KILN_CHECK(i >= 0 && i < num_outputs()) << "output " << i << " of " << num_outputs();
  return impl_->outputs[i];
}

Status GraphExecutor::set_input(const std::string& name, std::span<const float> data) {
  for (int i = 0; i < num_inputs(); ++i) {
    const TensorInfo& info = impl_->inputs[i];
    if (info.name != name) continue;
    if (static_cast<int64_t>(data.size()) != info.num_elements()) {
      return InvalidArgument(impl_->label + ": input '" + name + "' takes " +
                             std::to_string(info.num_elements()) + " floats, got " +
                             std::to_string(data.size()));
    }
    std::copy(data.begin(), data.end(), impl_->storage[impl_->model.inputs[i]]);
    return Status::Ok();
  }
  std::string names;
  for (const TensorInfo& info : impl_->inputs)
    names += (names.empty() ? "'" : ", '") + info.name + "'";
  return InvalidArgument(impl_->label + ": no input named '" + name + "' (the inputs are " +
                         (names.empty() ? "none" : names) + ")");
}

void GraphExecutor::run() {
  const KilnRuntimeApi* api = impl_->pool->api();
  for (size_t s = 0; s < impl_->stages.size(); ++s)
    impl_->stages[s](impl_->step_args[s].data(), api);
}

void GraphExecutor::run_profiled(std::vector<double>* step_seconds) {
  const KilnRuntimeApi* api = impl_->pool->api();
  step_seconds->resize(impl_->stages.size(), 0.0);
  for (size_t s = 0; s < impl_->stages.size(); ++s) {
    auto start = std::chrono::steady_clock::now();
    impl_->stages[s](impl_->step_args[s].data(), api);
    (*step_seconds)[s] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
}

std::span<const int64_t> GraphExecutor::get_output_int64(int i) const {
  KILN_CHECK(i >= 0 && i < num_outputs()) << "output " << i << " of " << num_outputs();
  KILN_CHECK(impl_->outputs[i].dtype == ModelDType::kInt64) << "output " << i << " is float32";
  return {reinterpret_cast<const int64_t*>(impl_->storage[impl_->model.outputs[i]]),
          static_cast<size_t>(impl_->outputs[i].num_elements())};
}

std::span<const float> GraphExecutor::get_output(int i) const {
  KILN_CHECK(i >= 0 && i < num_outputs()) << "output " << i << " of " << num_outputs();
  KILN_CHECK(impl_->outputs[i].dtype == ModelDType::kFloat32) << "output " << i << " is int64";
  return {impl_->storage[impl_->model.outputs[i]],
          static_cast<size_t>(impl_->outputs[i].num_elements())};
}

void GraphExecutor::set_threads(int threads) { impl_->pool->set_num_threads(threads); }
int GraphExecutor::threads() const { return impl_->pool->num_threads(); }
int64_t GraphExecutor::arena_bytes() const { return impl_->arena_bytes; }
int64_t GraphExecutor::unplanned_bytes() const { return impl_->unplanned_bytes; }
const ModelArtifact& GraphExecutor::model() const { return impl_->model; }

std::span<float> GraphExecutor::arena() {
  return {impl_->arena.get(), static_cast<size_t>(impl_->arena_bytes / sizeof(float))};
}

}  // namespace kiln
