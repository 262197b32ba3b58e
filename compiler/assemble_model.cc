#include "compiler/assemble_model.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <map>
#include <memory>
#include <string_view>
#include <thread>

#include "builder/codegen_llvm.h"
#include "builder/linker.h"
#include "builder/target.h"
#include "compiler/stage_access.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"

namespace kiln::compiler {

std::string symbol_safe(const std::string& text) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

namespace {

// The kernels compiled for `target` on `jobs` threads and linked into one shared object.
Result<std::string> link_kernels(const KernelGraph& g, const Target& target, int jobs) {
  std::vector<Result<std::string>> objects(g.kernels.size(), InternalError("not built"));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < g.kernels.size(); k = next++) {
      objects[k] = builder::compile_program(g.kernels[k].program, target);
    }
  };
  std::vector<std::thread> threads;
  int workers = std::clamp(jobs, 1, 64);
  for (int t = 1; t < workers; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  std::vector<std::string_view> object_views;
  for (size_t k = 0; k < g.kernels.size(); ++k) {
    if (!objects[k].ok()) {
      return CompileError(g.kernels[k].label + ": " + objects[k].status().message());
    }
    object_views.push_back(*objects[k]);
  }
  return builder::link_shared_object(object_views);
}

}  // namespace

Status assemble_model(KernelGraph g, const Target& target, int jobs, ModelArtifact* model) {
  auto root = [&](int value) { return resolve_view(g.values, value).value; };

  // Stage symbols are unique per kernel.
  for (size_t k = 0; k < g.kernels.size(); ++k) {
    for (ir::Stage& stage : g.kernels[k].program.stages) {
      stage.name = "k" + std::to_string(k) + "_" + symbol_safe(stage.name);
    }
  }
  // Stages that read only constants run now (weight packing, constant operands), once. A model
  // without kernels (constant outputs only) has no code. Code for a target this machine cannot
  // run (another architecture, or a CPU with features the host lacks) is never executed here:
  // the constant stages then run from a second build of the kernels for the host.
  std::unique_ptr<Artifact> so;
  if (!g.kernels.empty()) {
    KILN_ASSIGN_OR_RETURN(model->shared_object, link_kernels(g, target, jobs));
    std::string host_code;
    const std::string* code = &model->shared_object;
    if (!builder::runs_on_host(target).ok()) {
      KILN_ASSIGN_OR_RETURN(host_code, link_kernels(g, builder::host_target(), jobs));
      code = &host_code;
    }
    KILN_ASSIGN_OR_RETURN(so, Artifact::load_from_bytes(*code, "kiln-compile"));
  }
  std::map<int, int> writers;
  std::vector<std::vector<StageAccess>> access(g.kernels.size());
  for (size_t k = 0; k < g.kernels.size(); ++k) {
    for (const ir::Stage& stage : g.kernels[k].program.stages) {
      access[k].push_back(stage_access(g.kernels[k].program, stage));
      for (int b : access[k].back().writes) ++writers[root(g.kernels[k].values[b])];
    }
  }
  std::vector<ModelStep> steps;
  for (size_t k = 0; k < g.kernels.size(); ++k) {
    const Kernel& kernel = g.kernels[k];
    for (size_t s = 0; s < kernel.program.stages.size(); ++s) {
      const StageAccess& a = access[k][s];
      bool constant = !a.reads.empty();
      for (int b : a.reads) {
        constant = constant && g.values[root(kernel.values[b])].kind == ModelValueKind::kConstant;
      }
      for (int b : a.writes) {
        int v = root(kernel.values[b]);
        constant = constant && writers[v] == 1 && g.values[v].kind == ModelValueKind::kIntermediate;
      }
      const ir::Stage& stage = kernel.program.stages[s];
      if (constant) {
        std::vector<float*> buffers(kernel.values.size(), nullptr);
        for (int b : a.reads) {
          const ViewRoot at = resolve_view(g.values, kernel.values[b]);
          buffers[b] = g.constant_data[at.value].data() + at.offset;
        }
        for (int b : a.writes) {
          const ViewRoot at = resolve_view(g.values, kernel.values[b]);
          g.constant_data[at.value].resize(std::max<int64_t>(1, g.values[at.value].num_elements()),
                                           0.0f);
          g.values[at.value].kind = ModelValueKind::kConstant;
          buffers[b] = g.constant_data[at.value].data() + at.offset;
        }
        KILN_ASSIGN_OR_RETURN(kiln_stage_fn fn, so->stage(stage.name));
        fn(buffers.data(), default_thread_pool().api());
        continue;
      }
      ModelStep step;
      step.symbol = stage.name;
      step.label = kernel.label;
      step.config_source = kernel.config_source;
      for (size_t b = 0; b < kernel.values.size(); ++b) {
        bool used = std::count(a.reads.begin(), a.reads.end(), static_cast<int>(b)) ||
                    std::count(a.writes.begin(), a.writes.end(), static_cast<int>(b));
        step.buffers.push_back(used ? kernel.values[b] : -1);
      }
      steps.push_back(std::move(step));
    }
    if (kernel.flop > 0 && !steps.empty() && steps.back().label == kernel.label) {
      steps.back().flop = kernel.flop;
    }
  }

  // Keep the values the steps, inputs and outputs use; constants go into the blob, 64-byte
  // aligned.
  std::vector<int> keep(g.values.size(), 0);
  auto mark = [&](int v) {
    while (v >= 0 && !keep[v]) {
      keep[v] = 1;
      v = g.values[v].kind == ModelValueKind::kView ? g.values[v].view_of : -1;
    }
  };
  for (const ModelStep& step : steps) {
    for (int v : step.buffers) {
      if (v >= 0) mark(v);
    }
  }
  for (int v : g.inputs) mark(v);
  for (int v : g.outputs) mark(v);
  std::vector<int> renumber(g.values.size(), -1);
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (!keep[v]) continue;
    renumber[v] = static_cast<int>(model->values.size());
    ModelValue value = g.values[v];
    if (value.kind == ModelValueKind::kConstant) {
      value.constant_offset = static_cast<int64_t>(model->constants.size());
      model->constants.insert(model->constants.end(), g.constant_data[v].begin(),
                              g.constant_data[v].end());
      model->constants.resize((model->constants.size() + 15) / 16 * 16, 0.0f);
    }
    model->values.push_back(std::move(value));
  }
  for (ModelValue& value : model->values) {
    if (value.kind == ModelValueKind::kView) value.view_of = renumber[value.view_of];
  }
  for (ModelStep& step : steps) {
    for (int& v : step.buffers) {
      if (v >= 0) v = renumber[v];
    }
  }
  for (int v : g.inputs) model->inputs.push_back(renumber[v]);
  for (int v : g.outputs) model->outputs.push_back(renumber[v]);
  model->steps = std::move(steps);
  return Status::Ok();
}

}  // namespace kiln::compiler
