// A schedule template: how one operator becomes a tunable task, as in AutoTVM. Each template
// owns, for a workload: its parameters, its tensors, its FLOP count, its config space (with
// AutoTVM's knob names and semantics, so TVM logs apply), its fallback config, its schedule
// (config -> loop-nest IR, including the layout transforms the task needs) and a reference
// implementation used to check every generated kernel.
//
// Templates are stateless and thread-safe. Where an operator has several templates (dense:
// dense_nopack.x86 and dense_pack.x86), each is its own task, with TVM's task name.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"
#include "ops/config_space.h"
#include "ops/workload.h"

namespace kiln::ops {

// What a template needs to know about the machine it generates code for, filled in from the
// target description (exchange/target_description.h: TargetDescription::template_info). A
// default-constructed TargetInfo is only a tests' shorthand; kiln's code always describes its
// target.
struct TargetInfo {
  int simd_lanes = 16;        // float32 lanes of the widest vector: 16 with AVX-512, 8 with AVX2
  int vector_registers = 32;  // architectural registers of that width: 32 zmm, 16 ymm, 32 NEON
  int fma_units = 2;          // vector FMAs issued per cycle at that width
  int fma_latency = 4;        // cycles before an FMA's result feeds the next one
  int64_t l1d_bytes = 32 * 1024;
  int64_t l2_bytes = 1024 * 1024;
};

// The widest float32 vector of any target kiln describes (AVX-512's 16 lanes); the target
// description test checks it against exchange/target_description's table. Templates whose
// space must serve every target (a space never depends on the target) read it.
inline constexpr int kWidestSimdLanes = 16;

// Where the compiler chains convolutions without going through NCHW (TVM's NCHW[x]c between
// layers), the layouts of a conv kernel's activations. The default is the user's layout: NCHW in
// and out, which is also what tuning measures. Templates other than the NCHWc convolutions
// support only the default.
struct ActivationLayout {
  int64_t data_block = 0;      // the data arrives as NCHW[data_block]c (0: NCHW)
  bool packed_output = false;  // write the output as NCHW[oc_bn]c, oc_bn = tile_oc[-1]
  bool is_default() const { return data_block == 0 && !packed_output; }
};

// The NCHW[b]c blocks a config reads its data in and writes its output in, under a packed
// ActivationLayout (data_block = in, packed output of block out).
struct ActivationBlocks {
  int64_t in = 0;
  int64_t out = 0;
  bool operator==(const ActivationBlocks&) const = default;
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t num_elements() const;
};

class Template {
 public:
  virtual ~Template() = default;

  virtual std::string_view name() const = 0;  // TVM task name, e.g. "dense_pack.x86"
  virtual std::string_view op() const = 0;    // workload operator, e.g. "dense"

  // True for kiln's own templates beyond AutoTVM's x86 set (conv2d_NCHWc_winograd.x86). Such a
  // template applies to only some workloads of its operator (normalize refuses the others), is
  // not one of TVM's tasks (task extraction, `kiln tasks` and a --workload without --template
  // leave it out) and is used only where a measured record of it beats the operator's TVM
  // templates (never as the untuned fallback).
  virtual bool extra() const { return false; }

  // True for the template TVM's strategy picks for its operator when nothing is tuned (its
  // highest-priority implementation, dense_pack.x86 for dense); an operator without one uses its
  // first template (compiler/layout_candidates.h: fallback_template).
  virtual bool untuned_choice() const { return false; }

  // For an extra template: true where its default config is a better untuned choice for `w` on
  // `target` than its operator's TVM templates' (conv2d_NCHWc_ragged.x86 where no channel block
  // that divides K fills the target's vectors); compile_model then uses it for a task nothing
  // is recorded for. REQUIRES: w normalized for this template.
  virtual bool preferred_untuned(const Workload& w, const TargetInfo& target) const {
    (void)w;
    (void)target;
    return false;
  }

  // Checks the workload's parameters and fills in defaults (stride=1, pad=0, ...). The error
  // names the template and the bad, missing or unknown key. Every other method REQUIRES a
  // workload returned by normalize.
  virtual Result<Workload> normalize(const Workload& workload) const = 0;

  // Inputs then outputs, in the user's layout (NCHW, row-major), in kernel argument order.
  virtual std::vector<TensorSpec> inputs(const Workload& w) const = 0;
  virtual std::vector<TensorSpec> outputs(const Workload& w) const = 0;

  // Nominal floating-point operations (2*MACs for conv/matmul, bias adds excluded as in the
  // project's tasks.txt files).
  virtual double flop(const Workload& w) const = 0;

  virtual ConfigSpace space(const Workload& w) const = 0;

  // AutoTVM's fallback config for this template, as TVM computes it (kept for TVM parity).
  virtual ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                                const TargetInfo& target) const = 0;

  // kiln's config for a task nothing is recorded for: chosen within `space` for the target's
  // vector registers, width and caches without measuring (ops/default_config.h), so that its
  // register tile fits the register file. Templates without their own choice use fallback().
  virtual ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                                      const TargetInfo& target) const {
    return fallback(w, space, target);
  }

  // The config's program. Every config of space() is realized (TVM builds them all): a nest or
  // tile beyond ops/limits.h is reshaped to fit, never refused. A config the template cannot
  // realize (knobs missing or not of this space, e.g. from a hand-edited log) is an
  // InstantiationError whose message says why.
  // `layout` (conv templates only) changes the data and output buffers' layouts, nothing else:
  // the same loops compute the same sums.
  virtual Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                          const TargetInfo& target,
                                          const ActivationLayout& layout = {}) const = 0;

  // For templates that chain packed activations (the NCHWc convolutions): the blocks `config`
  // implies, which a compiler plans across the graph (compiler/layout_plan.h). nullopt for
  // templates that take only the default layout, and for a config without usable block knobs.
  virtual std::optional<ActivationBlocks> activation_blocks(const Workload& w,
                                                            const ConfigEntity& config) const {
    (void)w;
    (void)config;
    return std::nullopt;
  }

  // Straightforward reference computation, accumulating in double.
  virtual void reference(const Workload& w, const std::vector<const float*>& inputs,
                         const std::vector<float*>& outputs) const = 0;

  // The task's arguments serialized as AutoTVM does (autotvm.md §2), e.g. for dense
  // [["TENSOR",[M,K],"float32"],["TENSOR",[N,K],"float32"],null,"float32"].
  virtual nlohmann::json tvm_args(const Workload& w) const = 0;
};

// Declares a template's parameters for normalize_params: a key with an optional default.
struct ParamSpec {
  std::string key;
  std::optional<int64_t> default_value;
  int64_t min_value = 1;
  int64_t max_value = int64_t{1} << 24;  // keeps sizes and index arithmetic far from overflow
};

// Validates `w` against `specs` (unknown, missing, out-of-range keys are errors naming the
// template) and returns it with defaults filled in.
Result<Workload> normalize_params(const Workload& w, std::string_view template_name,
                                  const std::vector<ParamSpec>& specs);

}  // namespace kiln::ops
