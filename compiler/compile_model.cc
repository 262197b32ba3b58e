#include "compiler/compile_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "builder/target.h"
#include "common/check.h"
#include "compiler/assemble_model.h"
#include "compiler/batch_norm_folding.h"
#include "compiler/concat_in_place.h"
#include "compiler/elementwise.h"
#include "compiler/layer_norm_fusion.h"
#include "compiler/layout_candidates.h"
#include "compiler/layout_plan.h"
#include "compiler/layout_programs.h"
#include "compiler/lower_packed_elementwise.h"
#include "compiler/lower_packed_pool.h"
#include "compiler/lowering_util.h"
#include "compiler/model_planner.h"
#include "compiler/op_lowering.h"
#include "compiler/strided_copy_fusion.h"
#include "compiler/untuned_config.h"
#include "exchange/target_description.h"
#include "frontend/supported_ops.h"
#include "frontend/workload_mapping.h"
#include "ir/passes/fuse_epilogue.h"
#include "ops/conv_common.h"
#include "ops/registry.h"
#include "store/store.h"

#ifndef KILN_VERSION
#define KILN_VERSION "0.1.0"
#endif

namespace kiln::compiler {

namespace {

using frontend::Graph;
using frontend::Node;
using ir::passes::Epilogue;
using ir::passes::fuse_epilogue;

// Buffer shapes of the IR: a scalar is one element.
std::vector<int64_t> buffer_shape(const std::vector<int64_t>& shape) {
  return shape.empty() ? std::vector<int64_t>{1} : shape;
}

// The coordinates, in a tensor of `logical` shape, of the element a kernel stores at `stored` in
// its row-major buffer of shape `buffer`, where the two hold the same elements in the same order
// (a MatMul's [1, 128, 1024] computed as a [128, 1024] dense): the trailing dimensions they share
// map one to one, and the buffer's leading coordinates, flattened, are unravelled over the
// tensor's leading dimensions (size-1 dimensions read 0, so the usual case needs no division).
// nullopt where the element counts differ.
std::optional<std::vector<ir::Expr>> logical_coordinates(const std::vector<ir::Expr>& stored,
                                                         const std::vector<int64_t>& buffer,
                                                         const std::vector<int64_t>& logical) {
  if (buffer == logical) return stored;
  if (logical.empty() || product(buffer) != product(logical)) return std::nullopt;
  size_t b = buffer.size(), l = logical.size();
  std::vector<ir::Expr> out(l);
  while (b > 1 && l > 1 && buffer[b - 1] == logical[l - 1]) out[--l] = stored[--b];
  ir::Expr flat = stored[0];
  for (size_t i = 1; i < b; ++i) flat = flat * ir::Expr(buffer[i]) + stored[i];
  for (size_t j = l; j-- > 0;) {
    const bool outer_left = std::any_of(logical.begin(), logical.begin() + static_cast<long>(j),
                                        [](int64_t d) { return d != 1; });
    if (logical[j] == 1) {
      out[j] = ir::Expr(int64_t{0});
    } else if (!outer_left) {
      out[j] = flat;
    } else {
      out[j] = flat % ir::Expr(logical[j]);
      flat = flat / ir::Expr(logical[j]);
    }
  }
  return out;
}

// `out_idx` (coordinates in a tensor of rank out_idx.size()) mapped to a tensor of `shape` that
// broadcasts to it, numpy style (right-aligned, size-1 dimensions read index 0).
std::vector<ir::Expr> broadcast_index(const std::vector<ir::Expr>& out_idx,
                                      const std::vector<int64_t>& shape) {
  if (shape.empty()) return {ir::Expr(int64_t{0})};
  std::vector<ir::Expr> idx;
  int64_t offset = static_cast<int64_t>(out_idx.size()) - static_cast<int64_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t o = offset + static_cast<int64_t>(d);
    idx.push_back(shape[d] == 1 || o < 0 ? ir::Expr(int64_t{0}) : out_idx[o]);
  }
  return idx;
}

// The x86 features a model's code may need, as runtime/model_artifact.h checks them.
std::vector<std::string> required_features(const Target& target) {
  std::vector<std::string> out;
  for (const std::string& f : checkable_cpu_features()) {
    if (target.has_feature(f)) out.push_back(f);
  }
  return out;
}

std::string config_text(const ConfigEntity& config) { return config.to_json()["entity"].dump(); }

// Collects the extra tensors an epilogue reads as buffers of the kernel it is fused into.
class EpilogueInputs {
 public:
  explicit EpilogueInputs(const Graph& graph) : graph_(graph) {}
  // tensor[idx] in its logical (NCHW) layout.
  ir::Expr load(const std::string& tensor, const std::vector<ir::Expr>& idx) {
    return buffer_for(tensor, 0, buffer_shape(graph_.tensor(tensor).shape)).load(idx);
  }
  // tensor[idx] in the NCHW{b}c layout of `packed_shape` ([n, c / b, h, w, b]).
  ir::Expr load_packed(const std::string& tensor, const std::vector<ir::Expr>& idx,
                       const std::vector<int64_t>& packed_shape) {
    return buffer_for(tensor, packed_shape.at(4), packed_shape).load(idx);
  }
  struct Input {
    std::string tensor;
    int64_t block = 0;  // the layout it is read in: NCHW{block}c, or 0 for the logical one
    ir::Buffer buffer;
  };
  const std::vector<Input>& inputs() const { return inputs_; }

 private:
  const ir::Buffer& buffer_for(const std::string& tensor, int64_t block,
                               const std::vector<int64_t>& shape) {
    for (const Input& in : inputs_) {
      if (in.tensor == tensor && in.block == block) return in.buffer;
    }
    std::string name = block > 0 ? "epi_packed" + std::to_string(block) + "_" + symbol_safe(tensor)
                                 : "epi_" + symbol_safe(tensor);
    inputs_.push_back({tensor, block, ir::Buffer(name, shape, ir::BufferScope::kArgument)});
    return inputs_.back().buffer;
  }

  const Graph& graph_;
  std::vector<Input> inputs_;
};

// The emitter: the graph's kernels and values (KernelGraph), each tunable node's kernel the
// plan's choice for it (the convs; compiler/model_planner.h), else the store's best record or the
// untuned config (compiler/untuned_config.h). A structure pass (`plan` null) emits with default
// configs only, reading no store, to find the ConvStructure the planner needs.
class ModelEmitter {
 public:
  // `untuned` (null: default configs) gives the configs of tasks without records.
  ModelEmitter(Graph graph, Target target, const CompileOptions& options, const ConvPlan* plan,
               UntunedConfigs* untuned = nullptr)
      : graph_(std::move(graph)),
        target_(std::move(target)),
        options_(options),
        target_info_(describe(target_).template_info()),
        planning_(plan == nullptr),
        plan_(plan),
        untuned_(untuned) {}

  Status emit_graph();
  // What the structure pass found. REQUIRES: emit_graph succeeded.
  const ConvStructure& structure() const { return structure_; }
  // Builds and links the emitted kernels. REQUIRES: emit_graph succeeded; called once.
  Result<ModelArtifact> assemble(CompileReport* report);

 private:
  using Choice = TunableChoice;
  // A conv node whose config set a packed tensor's block, with the NCHW shape of its share of the
  // tensor (empty: all of it).
  using Origin = std::pair<size_t, std::vector<int64_t>>;
  struct Packed {
    int value = -1;
    int64_t block = 0;
    // One conv for its output and what pools and elementwise groups compute from it; every
    // producer of a Concat's inputs (or of a group's packed inputs): the planner is told that
    // the consumer reads each of them.
    std::vector<Origin> origins;
  };
  // Records that conv `consumer` reads `packed` (the tensor named `tensor`) as `use`, for the
  // planner: one edge per origin.
  void record_use(const Packed& packed, size_t consumer, EdgeUse use, const std::string& tensor);
  // The origins of those of `inputs` held packed, each share's shape given (a Concat's inputs).
  std::vector<Origin> origins_of(const std::vector<std::string>& inputs) const;
  // --- Values.
  Result<int> value_of(const std::string& tensor);
  Result<int> extra_input_value(const EpilogueInputs::Input& input);
  // `tensor` (held packed) in NCHW{block}c of packed `shape`: its packed value, or a copy in
  // that block, made once per tensor and block.
  int repacked_value(const std::string& tensor, int64_t block, const std::vector<int64_t>& shape);
  int add_value(const std::string& name, const std::vector<int64_t>& shape, ModelValueKind kind);
  int add_constant(const std::string& name, const std::vector<int64_t>& shape,
                   std::vector<float> data);
  int produced_value(const std::string& tensor);
  int produced_packed(const std::string& tensor, const std::vector<int64_t>& packed_shape,
                      std::vector<Origin> origins);

  // --- Partitioning and lowering.
  Status emit_node(size_t index);
  class NodeBinder;
  Status emit_view(const Node& node);
  // A node whose output equals its input: the same value, packed or not.
  Status emit_identity(const Node& node);
  Status emit_tunable(size_t index, const ops::Workload& workload);
  Status emit_elementwise(size_t index);
  Status emit_lowered(const Node& node);
  // A strided copy (compiler/strided_copy_fusion.h) whose output only a MatMul reads, as its
  // second operand, waits for that MatMul: a batch_matmul kernel takes that operand transposed,
  // and the copy can write it so (operand) instead of a second copy transposing it. Returns
  // whether the node waits.
  bool defer_strided_copy(size_t index);
  // Deferred strided copy `node` writing its output with the last two dimensions swapped: a new
  // value of `shape` (the operand's, its batch flattened), named for the MatMul `label`.
  Result<int> emit_transposed_copy(const Node& node, const std::vector<int64_t>& shape,
                                   const std::string& label);
  Status emit_packed_pool(const Node& node);
  Status emit_packed_concat(const Node& node);
  // The packed layout an elementwise group or a Concat writing `output` keeps: that of the first of
  // `inputs` held in NCHW{b}c (for an elementwise group, with the output's shape; for a Concat,
  // with a block dividing every input's channels). nullopt: the node computes in NCHW.
  std::optional<Packed> packed_layout(const std::string& output,
                                      const std::vector<std::string>& inputs,
                                      const Node* concat) const;
  // Those of `inputs` held in `layout`'s block whose packed buffer has no padding.
  std::set<std::string> packed_reads(const std::vector<std::string>& inputs,
                                     const Packed& layout) const;
  Status emit_output_copies();
  // The elementwise nodes that fuse after the node computing `anchor` (of `shape`), in graph
  // order, marked fused: the longest group whose only tensor read elsewhere is its last node's
  // output (ElementwiseGroup); empty where the anchor is read by anything else.
  std::vector<const Node*> absorb_chain(const std::string& anchor,
                                        const std::vector<int64_t>& shape);
  // How many nodes after the anchor's first reader absorb_chain looks at.
  static constexpr size_t kGroupScan = 64;
  Result<int> operand(const std::string& tensor, const std::vector<int64_t>& batch, bool transpose,
                      const std::string& label);
  // `config_source`: a tuned operator's kernel, where its config came from (ModelStep).
  // `flop`: a tuned operator's kernel, its template's floating-point operations.
  void add_kernel(ir::Program program, std::vector<int> values, std::string label,
                  std::string config_source = {}, double flop = 0);
  void mark_done(const Node& node);

  Result<Choice> choose_config(size_t index, const ops::Workload& workload);
  // The store's usable records of (tmpl, w), read once per compile.
  Result<const store::UsableRecords*> usable(const ops::Template& tmpl, const ops::Workload& w);
  // The fastest usable record's mean time of config `index` of (tmpl, w); nullopt if none.
  Result<std::optional<double>> recorded_seconds(const ops::Template& tmpl, const ops::Workload& w,
                                                 int64_t index);

  Graph graph_;
  Target target_;
  CompileOptions options_;
  ops::TargetInfo target_info_;

  KernelGraph kg_;  // what is emitted: values (constants with their data) and kernels
  std::map<std::string, int> tensor_value_;  // tensors in their logical layout
  // Conv outputs (and what elementwise groups and Concats compute from them) kept in
  // NCHW{block}c for the convs that read them; value_of unpacks one on demand for any other
  // reader.
  std::map<std::string, Packed> packed_;
  // Copies of packed tensors in another block, for fused epilogues that write that block.
  std::map<std::pair<std::string, int64_t>, int> repacked_;
  std::set<std::string> graph_outputs_;
  std::map<std::string, std::vector<size_t>> consumers_;
  std::vector<bool> fused_;
  std::set<std::string> done_;  // tensors computed before the next kernel runs
  // Strided copies waiting for their MatMul (defer_strided_copy): output tensor -> node index.
  std::map<std::string, size_t> deferred_copies_;
  std::map<std::pair<std::string, std::string>, CompiledTask> tasks_;
  int fused_nodes_ = 0;
  int layout_transforms_ = 0;

  bool planning_ = false;           // emitting to find the structure: configs are the defaults
  const ConvPlan* plan_ = nullptr;  // conv node -> its planned config (null when planning_)
  UntunedConfigs* untuned_ = nullptr;
  std::map<std::pair<std::string, std::string>, store::UsableRecords> usable_;  // usable()
  ConvStructure structure_;
};

int ModelEmitter::add_value(const std::string& name, const std::vector<int64_t>& shape,
                            ModelValueKind kind) {
  ModelValue v;
  v.name = name;
  v.shape = shape;
  v.kind = kind;
  kg_.values.push_back(std::move(v));
  kg_.constant_data.emplace_back();
  return static_cast<int>(kg_.values.size()) - 1;
}

int ModelEmitter::add_constant(const std::string& name, const std::vector<int64_t>& shape,
                               std::vector<float> data) {
  int id = add_value(name, shape, ModelValueKind::kConstant);
  kg_.constant_data[id] = std::move(data);
  return id;
}

Result<int> ModelEmitter::value_of(const std::string& tensor) {
  auto it = tensor_value_.find(tensor);
  if (it != tensor_value_.end()) return it->second;
  if (auto deferred = deferred_copies_.find(tensor); deferred != deferred_copies_.end()) {
    // Read as it is after all: the copy as the graph has it.
    const Node& node = graph_.nodes[deferred->second];
    deferred_copies_.erase(deferred);
    KILN_RETURN_IF_ERROR(emit_lowered(node));
    return tensor_value_.at(tensor);
  }
  const frontend::Tensor& t = graph_.tensor(tensor);
  auto packed = packed_.find(tensor);
  if (packed != packed_.end()) {
    // NCHW{b}c -> NCHW for a reader that is not a conv, once per tensor.
    int64_t b = packed->second.block;
    const std::vector<int64_t>& shape = t.shape;
    ir::Program unpack = unpack_program(
        ir::Buffer("in", kg_.values[packed->second.value].shape, ir::BufferScope::kArgument),
        ir::Buffer("out", shape, ir::BufferScope::kArgument), target_info_.simd_lanes,
        "unpack_" + symbol_safe(tensor));
    int id = add_value(
        tensor, shape,
        graph_outputs_.count(tensor) ? ModelValueKind::kOutput : ModelValueKind::kIntermediate);
    tensor_value_[tensor] = id;
    ++layout_transforms_;
    add_kernel(std::move(unpack), {packed->second.value, id},
               "layout NCHW" + std::to_string(b) + "c -> NCHW of " + tensor);
    return id;
  }
  int id = -1;
  if (t.is_constant) {
    if (t.dtype != frontend::DType::kFloat32) {
      return UnimplementedError(graph_.source + ": constant '" + tensor + "' of dtype " +
                                frontend::dtype_name(t.dtype) +
                                " is used as data; kiln computes in float32 only");
    }
    id = add_constant(tensor, t.shape, t.f32);
  } else if (std::find(graph_.inputs.begin(), graph_.inputs.end(), tensor) != graph_.inputs.end()) {
    if (t.dtype != frontend::DType::kFloat32) {
      return UnimplementedError(graph_.source + ": input '" + tensor + "' of dtype " +
                                frontend::dtype_name(t.dtype) +
                                " is used as data; kiln computes in float32 only");
    }
    id = add_value(tensor, t.shape, ModelValueKind::kInput);
  } else {
    return InternalError("tensor '" + tensor + "' is read before any kernel computes it");
  }
  tensor_value_[tensor] = id;
  return id;
}

int ModelEmitter::produced_packed(const std::string& tensor,
                                  const std::vector<int64_t>& packed_shape,
                                  std::vector<Origin> origins) {
  int id = add_value(tensor + " (NCHW" + std::to_string(packed_shape.back()) + "c)", packed_shape,
                     ModelValueKind::kIntermediate);
  packed_[tensor] = {id, packed_shape.back(), std::move(origins)};
  return id;
}

Result<int> ModelEmitter::extra_input_value(const EpilogueInputs::Input& input) {
  if (input.block == 0) return value_of(input.tensor);
  return repacked_value(input.tensor, input.block, input.buffer->shape);
}

int ModelEmitter::repacked_value(const std::string& tensor, int64_t block,
                                 const std::vector<int64_t>& shape) {
  const Packed& packed = packed_.at(tensor);
  if (packed.block == block) return packed.value;
  // NCHW{a}c -> NCHW{b}c, once per tensor and block.
  auto [it, added] = repacked_.try_emplace({tensor, block}, -1);
  if (!added) return it->second;
  ir::Program repack =
      repack_program(ir::Buffer("in", kg_.values[packed.value].shape, ir::BufferScope::kArgument),
                     ir::Buffer("out", shape, ir::BufferScope::kArgument),
                     "repack" + std::to_string(block) + "_" + symbol_safe(tensor));
  it->second = add_value(tensor + "/NCHW" + std::to_string(block) + "c", shape,
                         ModelValueKind::kIntermediate);
  ++layout_transforms_;
  add_kernel(std::move(repack), {packed.value, it->second},
             "layout NCHW" + std::to_string(packed.block) + "c -> NCHW" + std::to_string(block) +
                 "c of " + tensor);
  return it->second;
}

int ModelEmitter::produced_value(const std::string& tensor) {
  bool is_output = graph_outputs_.count(tensor) > 0;
  int id = add_value(tensor, graph_.tensor(tensor).shape,
                     is_output ? ModelValueKind::kOutput : ModelValueKind::kIntermediate);
  tensor_value_[tensor] = id;
  return id;
}

void ModelEmitter::add_kernel(ir::Program program, std::vector<int> values, std::string label,
                              std::string config_source, double flop) {
  KILN_CHECK(values.size() == program.buffers.size())
      << label << ": " << values.size() << " values for " << program.buffers.size() << " buffers";
  kg_.kernels.push_back(
      {std::move(program), std::move(values), std::move(label), std::move(config_source), flop});
}

void ModelEmitter::mark_done(const Node& node) {
  for (const std::string& out : node.outputs) {
    if (!out.empty()) done_.insert(out);
  }
}

std::vector<const Node*> ModelEmitter::absorb_chain(const std::string& anchor,
                                                    const std::vector<int64_t>& shape) {
  // Candidates, in graph (topological) order: elementwise nodes of the anchor's shape that read
  // the anchor or an earlier candidate, and nothing else but constants and tensors computed
  // before this kernel runs. A diamond (SiLU's x * Sigmoid(x), GELU's x * (Erf(x / sqrt 2) + 1))
  // is one group, where a chain would stop at the tensor read twice.
  auto consumers = consumers_.find(anchor);
  if (consumers == consumers_.end()) return {};
  const size_t first = *std::min_element(consumers->second.begin(), consumers->second.end());
  std::set<std::string> produced = {anchor};
  std::vector<size_t> candidates;
  for (size_t i = first; i < graph_.nodes.size() && i < first + kGroupScan; ++i) {
    const Node& n = graph_.nodes[i];
    if (fused_[i] || !is_elementwise(n) || n.outputs.empty() || n.outputs[0].empty() ||
        graph_.tensor(n.outputs[0]).shape != shape) {
      continue;
    }
    bool reads_group = false, ready = true;
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      if (produced.count(in)) {
        reads_group = true;
      } else if (!graph_.is_constant(in) && !done_.count(in)) {
        ready = false;
      }
    }
    if (!reads_group || !ready) continue;
    candidates.push_back(i);
    produced.insert(n.outputs[0]);
  }
  // The longest prefix of the candidates that leaves one tensor live: every other tensor it
  // computes (the anchor included) is read by the prefix alone and is no graph output.
  std::set<size_t> members;
  size_t longest = 0;
  for (size_t len = 1; len <= candidates.size(); ++len) {
    members.insert(candidates[len - 1]);
    bool closed = true;
    for (size_t k = 0; k < len && closed; ++k) {
      const std::string& t = k == 0 ? anchor : graph_.nodes[candidates[k - 1]].outputs[0];
      if (graph_outputs_.count(t)) closed = false;
      auto readers = consumers_.find(t);
      if (readers == consumers_.end()) continue;
      for (size_t r : readers->second) {
        if (!members.count(r)) closed = false;
      }
    }
    if (closed) longest = len;
  }
  std::vector<const Node*> group;
  for (size_t k = 0; k < longest; ++k) {
    group.push_back(&graph_.nodes[candidates[k]]);
    fused_[candidates[k]] = true;
    ++fused_nodes_;
  }
  return group;
}

Result<const store::UsableRecords*> ModelEmitter::usable(const ops::Template& tmpl,
                                                         const ops::Workload& w) {
  auto key = std::make_pair(std::string(tmpl.name()), w.to_string());
  auto it = usable_.find(key);
  if (it == usable_.end()) {
    KILN_ASSIGN_OR_RETURN(
        store::UsableRecords records,
        store::usable_records(*options_.store, tmpl, w, target_, options_.records));
    it = usable_.emplace(std::move(key), std::move(records)).first;
  }
  return &it->second;
}

Result<std::optional<double>> ModelEmitter::recorded_seconds(const ops::Template& tmpl,
                                                             const ops::Workload& w,
                                                             int64_t index) {
  KILN_ASSIGN_OR_RETURN(const store::UsableRecords* usable, usable(tmpl, w));
  std::optional<double> seconds;
  for (const store::Record& r : usable->records) {
    if (r.config_index == index && (!seconds || r.mean_cost() < *seconds)) seconds = r.mean_cost();
  }
  return seconds;
}

Result<ModelEmitter::Choice> ModelEmitter::choose_config(size_t index,
                                                         const ops::Workload& workload) {
  std::vector<const ops::Template*> templates = ops::templates_for_op(workload.op);
  if (templates.empty()) return InternalError("no template for operator " + workload.op);
  Choice best;
  double best_cost = 0;
  bool tuned = false;
  const Choice* planned = nullptr;
  if (plan_) {
    auto it = plan_->find(index);
    if (it != plan_->end()) planned = &it->second;
  }
  ConfigSource source = ConfigSource::kDefault;
  if (planned) {
    best = *planned;
    tuned = best.tuned;
    source = tuned ? ConfigSource::kTuned : best.source;
  }
  for (const ops::Template* tmpl : templates) {
    // An extra template (Winograd) applies to some workloads only, and competes only with a
    // measured record of a TVM template (they come first): never with an untuned fallback.
    if (tmpl->extra() && (!best.tmpl || !tmpl->normalize(workload).ok())) continue;
    KILN_ASSIGN_OR_RETURN(ops::Workload w, tmpl->normalize(workload));
    if (!options_.store || planning_ || planned) continue;
    KILN_ASSIGN_OR_RETURN(const store::UsableRecords* usable, usable(*tmpl, w));
    std::optional<store::Record> record = store::fastest(usable->records);
    if (!record) continue;
    Result<ConfigEntity> config = tmpl->space(w).from_json_entities(record->entities);
    if (!config.ok()) continue;  // a record of another space version: not usable here
    if (!best.tmpl || record->mean_cost() < best_cost) {
      best = {tmpl, w, std::move(config).value(), false, usable->origin};
      best_cost = record->mean_cost();
    }
  }
  if (best.tmpl && !planned) {
    tuned = true;
    source = ConfigSource::kTuned;
  }
  if (!best.tmpl) {
    // TVM's strategy picks the implementation with the highest priority when nothing is tuned.
    const ops::Template* tmpl = fallback_template(templates, workload, target_info_);
    KILN_ASSIGN_OR_RETURN(ops::Workload w, tmpl->normalize(workload));
    if (untuned_ && !planning_) {
      KILN_ASSIGN_OR_RETURN(UntunedConfig chosen, untuned_->choose(*tmpl, w));
      best = {tmpl, w, std::move(chosen.config), false, {}, chosen.source};
      source = chosen.source;
    } else {
      // The structure pass needs no prediction: only the blocks' structure, not the configs.
      best = {tmpl,  w,  tmpl->default_config(w, tmpl->space(w), target_info_),
              false, {}, ConfigSource::kDefault};
    }
  }
  auto key = std::make_pair(std::string(best.tmpl->name()), best.workload.to_string());
  CompiledTask& task = tasks_[key];
  task.template_name = key.first;
  task.workload = key.second;
  task.count += 1;
  // A task some of whose nodes are tuned (the layout plan may mix them) lists as tuned.
  task.tuned = task.tuned || tuned;
  if (tuned) task.origin = best.origin;
  if (task.count == 1 || source < task.source) task.source = source;
  // The layout plan may give nodes of one workload different configs: each is listed.
  std::string text = config_text(best.config);
  if (task.config.empty()) {
    task.config = text;
  } else if (task.config.find(text) == std::string::npos) {
    task.config += " | " + text;
  }
  if (options_.store && !planning_ && task.count == 1) {
    KILN_ASSIGN_OR_RETURN(task.chosen_seconds,
                          recorded_seconds(*best.tmpl, best.workload, best.config.index()));
    const ops::Template* fallback = fallback_template(templates, workload, target_info_);
    KILN_ASSIGN_OR_RETURN(ops::Workload w, fallback->normalize(workload));
    const int64_t default_index =
        fallback->default_config(w, fallback->space(w), target_info_).index();
    KILN_ASSIGN_OR_RETURN(task.default_seconds, recorded_seconds(*fallback, w, default_index));
  }
  best.source = source;
  return best;
}

// An operand of a matrix product in the [batch, rows, cols] layout a template takes: the tensor
// itself when it already is, else a layout kernel (evaluated at compile time for constants).
Result<int> ModelEmitter::operand(const std::string& tensor, const std::vector<int64_t>& batch,
                                  bool transpose, const std::string& label) {
  std::vector<int64_t> shape = graph_.tensor(tensor).shape;
  if (shape.size() == 1)
    shape = transpose ? std::vector<int64_t>{shape[0], 1} : std::vector<int64_t>{1, shape[0]};
  std::vector<int64_t> own_batch(shape.begin(), shape.end() - 2);
  while (own_batch.size() < batch.size()) own_batch.insert(own_batch.begin(), 1);
  if (auto deferred = deferred_copies_.find(tensor);
      deferred != deferred_copies_.end() && transpose && own_batch == batch) {
    const Node& node = graph_.nodes[deferred->second];
    deferred_copies_.erase(deferred);
    return emit_transposed_copy(node, {product(batch), shape.back(), shape[shape.size() - 2]},
                                label);
  }
  KILN_ASSIGN_OR_RETURN(int in, value_of(tensor));
  if (!transpose && own_batch == batch) return in;
  ir::Program program =
      matmul_operand_program(shape, batch, transpose, "operand_" + symbol_safe(tensor));
  int out = add_value(label + "/operand " + tensor, program.buffers[1]->shape,
                      ModelValueKind::kIntermediate);
  add_kernel(std::move(program), {in, out}, label + " (operand " + tensor + ")");
  return out;
}

// What an operator's binding (ops/operator.h) reads of the model being emitted, for one node.
class ModelEmitter::NodeBinder final : public ops::ArgumentBinder {
 public:
  NodeBinder(ModelEmitter& compiler, const Node& node, const ops::ActivationLayout& layout,
             const std::string& label)
      : compiler_(compiler), node_(node), layout_(layout), label_(label) {}

  Result<int> value(const std::string& tensor) override { return compiler_.value_of(tensor); }
  Result<int> activation(const std::string& tensor) override {
    if (layout_.data_block > 0) return compiler_.packed_.at(tensor).value;
    return compiler_.value_of(tensor);
  }
  Result<int> operand(const std::string& tensor, const std::vector<int64_t>& batch,
                      bool transpose) override {
    return compiler_.operand(tensor, batch, transpose, label_);
  }
  int zero_bias(int64_t n) override {
    return compiler_.add_constant(node_.outputs[0] + "/zero bias", {n},
                                  std::vector<float>(n, 0.0f));
  }

 private:
  ModelEmitter& compiler_;
  const Node& node_;
  const ops::ActivationLayout& layout_;
  const std::string& label_;
};

Status ModelEmitter::emit_tunable(size_t index, const ops::Workload& workload) {
  const Node& node = graph_.nodes[index];
  KILN_ASSIGN_OR_RETURN(Choice choice, choose_config(index, workload));
  const std::string& anchor = node.outputs[0];
  std::vector<int64_t> anchor_shape = graph_.tensor(anchor).shape;
  const ops::Operator* op = ops::find_operator(choice.workload.op);
  if (!op) return InternalError("no argument mapping for tunable operator " + choice.workload.op);
  bool packed = op->packed_activations();
  // Convs read a producer's NCHW{b}c output as it is, and keep their own output packed unless
  // it leaves the graph: the chain fused into the write-back is decided first.
  ops::ActivationLayout layout;
  std::vector<const Node*> chain;
  const std::optional<ops::ActivationBlocks> blocks =
      packed ? choice.tmpl->activation_blocks(choice.workload, choice.config) : std::nullopt;
  if (packed) {
    structure_.convs.push_back({index, workload});
    auto packed_input = packed_.find(node.inputs[0]);
    if (packed_input != packed_.end()) {
      layout.data_block = packed_input->second.block;
      record_use(packed_input->second, index, EdgeUse::kData, node.inputs[0]);
    }
    chain = absorb_chain(anchor, anchor_shape);
    std::string result = chain.empty() ? anchor : chain.back()->outputs[0];
    // A config whose output block is 0 (a ragged block) writes NCHW.
    layout.packed_output = !graph_outputs_.count(result) && (!blocks || blocks->out > 0);
  }
  KILN_ASSIGN_OR_RETURN(
      ir::Program program,
      choice.tmpl->instantiate(choice.workload, choice.config, target_info_, layout));
  std::string label = node.describe() + " [" + std::string(choice.tmpl->name()) + "]";
  const std::string source(config_source_name(choice.source));
  const double flop = choice.tmpl->flop(choice.workload);
  if (packed) {
    // The kernel converts when its block is not the producer's (or NCHW), unless it reads the
    // producer's block of several of its chunks where they lie.
    const bool reads_wider_block = layout.data_block > 0 && !ops::conv::packs_data(program);
    if (blocks && blocks->in != layout.data_block && !reads_wider_block) ++layout_transforms_;
  }

  NodeBinder binder(*this, node, layout, label);
  KILN_ASSIGN_OR_RETURN(ops::Binding binding,
                        op->bind(frontend::GraphNodeView(graph_, node), choice.workload, binder));
  std::vector<int> args = std::move(binding.args);
  const float alpha = binding.scale, beta = binding.addend_scale;
  const std::string& c_tensor = binding.addend;
  if (static_cast<int>(args.size()) != program.num_inputs) {
    return InternalError(label + ": " + std::to_string(args.size()) + " arguments for " +
                         std::to_string(program.num_inputs) + " template inputs");
  }

  // The epilogue: the binding's scale and addend (Gemm's alpha and beta * C when C is not the
  // template's bias), then the elementwise chain that consumes the product alone.
  // A kernel whose buffer holds the tensor in another shape (a batched MatMul's leading
  // dimensions folded into a dense's rows) maps its stored coordinates to the tensor's.
  const ir::Buffer out_buffer = program.buffers[program.num_inputs];
  const std::vector<int64_t> logical_shape = buffer_shape(anchor_shape);
  const bool maps_coordinates =
      !packed && logical_coordinates(std::vector<ir::Expr>(out_buffer->shape.size(), 0),
                                     out_buffer->shape, logical_shape)
                     .has_value();
  if (maps_coordinates) chain = absorb_chain(anchor, anchor_shape);
  int64_t out_block = layout.packed_output ? out_buffer->shape[4] : 0;
  bool pre = alpha != 1.0f || !c_tensor.empty();
  std::string result = chain.empty() ? anchor : chain.back()->outputs[0];

  EpilogueInputs extras(graph_);
  ElementwiseGroup group{chain};
  Status epilogue_status;
  Epilogue epilogue = [&](const ir::Expr& v, const std::vector<ir::Expr>& stored) -> ir::Expr {
    // Coordinates in the logical NCHW tensor (the store's own when the output is not packed).
    std::vector<ir::Expr> idx = stored;
    if (out_block > 0) {
      idx = {stored[0], stored[1] * ir::Expr(out_block) + stored[4], stored[2], stored[3]};
    } else if (maps_coordinates) {
      idx = *logical_coordinates(stored, out_buffer->shape, logical_shape);
    }
    auto load_external = [&](const std::string& name, const std::vector<ir::Expr>& at) {
      auto p = packed_.find(name);
      // A packed tensor of the output's shape and block is read where the output is written.
      if (out_block > 0 && p != packed_.end() && graph_.tensor(name).shape == anchor_shape) {
        record_use(p->second, index, EdgeUse::kEpilogue, name);
        // In another block, through a copy in the output's (extra_input_value).
        if (p->second.block > 0) return extras.load_packed(name, stored, out_buffer->shape);
      }
      return extras.load(name, at);
    };
    ir::Expr value = v;
    if (alpha != 1.0f) value = value * ir::f32(alpha);
    if (!c_tensor.empty()) {
      ir::Expr c = extras.load(c_tensor, broadcast_index(idx, graph_.tensor(c_tensor).shape));
      value = value + (beta == 1.0f ? c : c * ir::f32(beta));
    }
    if (chain.empty()) return value;
    Result<ir::Expr> out = group_value(
        graph_, group, idx, [&](const std::string& name, const std::vector<ir::Expr>& at) {
          return name == anchor ? value : load_external(name, at);
        });
    if (!out.ok()) {
      epilogue_status = out.status();
      return value;
    }
    return std::move(out).value();
  };

  if (!pre && chain.empty()) {
    args.push_back(out_block > 0 ? produced_packed(anchor, out_buffer->shape, {{index, {}}})
                                 : produced_value(anchor));
  } else {
    Result<ir::Program> fused = fuse_epilogue(program, out_buffer, epilogue);
    KILN_RETURN_IF_ERROR(epilogue_status);
    if (fused.ok()) {
      program = std::move(fused).value();
      // The epilogue's tensors become inputs of the kernel, ahead of its outputs.
      for (const EpilogueInputs::Input& in : extras.inputs()) {
        program.buffers.insert(program.buffers.begin() + program.num_inputs, in.buffer);
        ++program.num_inputs;
        KILN_ASSIGN_OR_RETURN(int v, extra_input_value(in));
        args.push_back(v);
      }
      args.push_back(out_block > 0 ? produced_packed(result, out_buffer->shape, {{index, {}}})
                                   : produced_value(result));
      label += chain.empty() ? "" : " + " + std::to_string(chain.size()) + " fused";
    } else {
      // The kernel accumulates in its output: the epilogue runs as a kernel of its own.
      if (out_block > 0) return InternalError(label + ": a packed output must fuse its epilogue");
      int product_value =
          add_value(anchor + "/product", out_buffer->shape, ModelValueKind::kIntermediate);
      args.push_back(product_value);
      ir::Buffer in("in", out_buffer->shape, ir::BufferScope::kArgument);
      ir::Buffer out("out", out_buffer->shape, ir::BufferScope::kArgument);
      ir::Program apply = pointwise_program(
          out_buffer->shape, target_info_.simd_lanes, in, out,
          [&](const std::vector<ir::Expr>& idx) { return epilogue(in.load(idx), idx); },
          "epilogue_" + symbol_safe(anchor));
      KILN_RETURN_IF_ERROR(epilogue_status);
      std::vector<int> apply_values = {product_value};
      for (const EpilogueInputs::Input& in : extras.inputs()) {
        apply.buffers.insert(apply.buffers.begin() + apply.num_inputs, in.buffer);
        ++apply.num_inputs;
        KILN_ASSIGN_OR_RETURN(int v, extra_input_value(in));
        apply_values.push_back(v);
      }
      // Workspace of the template stays with the template's kernel.
      for (size_t i = program.num_inputs + program.num_outputs; i < program.buffers.size(); ++i) {
        args.push_back(add_value(label + "/" + program.buffers[i]->name, program.buffers[i]->shape,
                                 ModelValueKind::kIntermediate));
      }
      add_kernel(std::move(program), std::move(args), label, source, flop);
      apply_values.push_back(produced_value(result));
      add_kernel(std::move(apply), std::move(apply_values), label + " epilogue");
      done_.insert(anchor);
      for (const Node* n : chain) mark_done(*n);
      return Status::Ok();
    }
  }
  for (size_t i = program.num_inputs + program.num_outputs; i < program.buffers.size(); ++i) {
    args.push_back(add_value(label + "/" + program.buffers[i]->name, program.buffers[i]->shape,
                             ModelValueKind::kIntermediate));
  }
  add_kernel(std::move(program), std::move(args), label, source, flop);
  done_.insert(anchor);
  for (const Node* n : chain) mark_done(*n);
  return Status::Ok();
}

Status ModelEmitter::emit_view(const Node& node) {
  KILN_ASSIGN_OR_RETURN(int in, value_of(node.inputs[0]));
  const std::string& out = node.outputs[0];
  int id = add_value(out, graph_.tensor(out).shape, ModelValueKind::kView);
  kg_.values[id].view_of = in;
  tensor_value_[out] = id;
  done_.insert(out);
  return Status::Ok();
}

Status ModelEmitter::emit_identity(const Node& node) {
  auto packed = packed_.find(node.inputs[0]);
  if (packed == packed_.end() || graph_outputs_.count(node.outputs[0])) return emit_view(node);
  packed_[node.outputs[0]] = packed->second;
  mark_done(node);
  return Status::Ok();
}

Status ModelEmitter::emit_elementwise(size_t index) {
  const Node& node = graph_.nodes[index];
  fused_[index] = true;
  mark_done(node);
  std::vector<const Node*> nodes = {&node};
  std::vector<const Node*> chain =
      absorb_chain(node.outputs[0], graph_.tensor(node.outputs[0]).shape);
  nodes.insert(nodes.end(), chain.begin(), chain.end());
  ElementwiseGroup group{nodes};
  const std::vector<std::string> inputs = external_inputs(graph_, group);
  // Between two convs the group keeps their NCHW{b}c layout: no unpack before, no packing after.
  const std::optional<Packed> layout = packed_layout(group.output(), inputs, nullptr);
  const std::set<std::string> packed =
      layout ? packed_reads(inputs, *layout) : std::set<std::string>{};
  std::vector<int64_t> packed_shape;
  if (layout) {
    const std::vector<int64_t>& shape = graph_.tensor(group.output()).shape;
    packed_shape = {shape[0], shape[1] / layout->block, shape[2], shape[3], layout->block};
  }
  KILN_ASSIGN_OR_RETURN(
      ir::Program program,
      layout ? lower_packed_elementwise_group(graph_, group, packed_shape, packed, target_info_)
             : lower_elementwise_group(graph_, group, target_info_));
  std::vector<int> values;
  for (const std::string& t : inputs) {
    if (packed.count(t)) {
      values.push_back(packed_.at(t).value);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(int v, value_of(t));
    values.push_back(v);
  }
  if (layout) {
    std::vector<std::string> same_shape;  // the inputs the output's block is read for
    for (const std::string& t : inputs) {
      if (graph_.tensor(t).shape == graph_.tensor(group.output()).shape) same_shape.push_back(t);
    }
    values.push_back(produced_packed(group.output(), packed_shape, origins_of(same_shape)));
  } else {
    values.push_back(produced_value(group.output()));
  }
  for (size_t i = values.size(); i < program.buffers.size(); ++i) {
    values.push_back(add_value(node.describe() + "/" + program.buffers[i]->name,
                               program.buffers[i]->shape, ModelValueKind::kIntermediate));
  }
  std::string label = node.describe();
  if (layout) label += " (NCHW" + std::to_string(layout->block) + "c)";
  if (!chain.empty()) label += " + " + std::to_string(chain.size()) + " fused";
  for (const Node* n : chain) mark_done(*n);
  add_kernel(std::move(program), std::move(values), label);
  return Status::Ok();
}

Status ModelEmitter::emit_lowered(const Node& node) {
  KILN_ASSIGN_OR_RETURN(ir::Program program, lower_node(graph_, node, target_info_));
  std::vector<int> values;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty() || frontend::is_parameter_input(node.op_type, i)) continue;
    KILN_ASSIGN_OR_RETURN(int v, value_of(node.inputs[i]));
    values.push_back(v);
  }
  if (static_cast<int>(values.size()) != program.num_inputs) {
    return InternalError(node.describe() + ": kernel has " + std::to_string(program.num_inputs) +
                         " inputs, the node " + std::to_string(values.size()) + " data inputs");
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty() || frontend::is_parameter_output(node.op_type, i)) continue;
    values.push_back(produced_value(node.outputs[i]));
  }
  if (static_cast<int>(values.size()) != program.num_inputs + program.num_outputs) {
    return InternalError(node.describe() + ": kernel outputs do not match the node's");
  }
  for (size_t i = values.size(); i < program.buffers.size(); ++i) {
    values.push_back(add_value(node.describe() + "/" + program.buffers[i]->name,
                               program.buffers[i]->shape, ModelValueKind::kIntermediate));
  }
  add_kernel(std::move(program), std::move(values), node.describe());
  mark_done(node);
  return Status::Ok();
}

bool ModelEmitter::defer_strided_copy(size_t index) {
  const Node& node = graph_.nodes[index];
  if (node.op_type != kStridedCopyOp || node.outputs.size() != 1) return false;
  const std::string& out = node.outputs[0];
  auto readers = consumers_.find(out);
  if (graph_outputs_.count(out) || graph_.tensor(out).shape.size() < 2 ||
      readers == consumers_.end() || readers->second.size() != 1) {
    return false;
  }
  const Node& reader = graph_.nodes[readers->second[0]];
  if (reader.op_type != "MatMul" || reader.inputs.size() != 2 || reader.inputs[1] != out ||
      reader.inputs[0] == out) {
    return false;
  }
  deferred_copies_[out] = index;
  done_.insert(out);  // computed whenever it is read (value_of, operand)
  return true;
}

Result<int> ModelEmitter::emit_transposed_copy(const Node& node, const std::vector<int64_t>& shape,
                                               const std::string& label) {
  const std::string& tensor = node.outputs[0];
  const std::vector<int64_t>& dims = graph_.tensor(tensor).shape;
  const size_t rank = dims.size();
  Node transposed = node;
  transposed.outputs[0] = tensor + "/transposed";
  std::vector<int64_t> strides = node.attr_ints("strides", {});
  if (strides.size() != rank) {
    return InvalidArgument(node.describe() + ": " + std::to_string(strides.size()) +
                           " strides for an output of " + std::to_string(rank) + " dimensions");
  }
  std::swap(strides[rank - 1], strides[rank - 2]);
  transposed.attrs["strides"] = strides;
  frontend::Tensor t = graph_.tensor(tensor);
  t.name = transposed.outputs[0];
  std::swap(t.shape[rank - 1], t.shape[rank - 2]);
  graph_.tensors[t.name] = t;
  KILN_ASSIGN_OR_RETURN(ir::Program program, lower_node(graph_, transposed, target_info_));
  KILN_ASSIGN_OR_RETURN(int in, value_of(node.inputs[0]));
  int out = add_value(label + "/operand " + tensor, shape, ModelValueKind::kIntermediate);
  // No template in the label: a copy, not a tuned kernel (cli/step_kind.h).
  add_kernel(std::move(program), {in, out},
             node.describe() + " (written transposed for its MatMul)");
  return out;
}

Status ModelEmitter::emit_packed_pool(const Node& node) {
  const Packed in = packed_.at(node.inputs[0]);
  KILN_ASSIGN_OR_RETURN(ir::Program program,
                        lower_packed_pool(graph_, node, kg_.values[in.value].shape));
  const std::string& out = node.outputs[0];
  int out_value = packed_pool_output(node)
                      ? produced_packed(out, program.buffers[1]->shape, in.origins)
                      : produced_value(out);
  add_kernel(std::move(program), {in.value, out_value},
             node.describe() + " (NCHW" + std::to_string(in.block) + "c)");
  mark_done(node);
  return Status::Ok();
}

std::optional<ModelEmitter::Packed> ModelEmitter::packed_layout(
    const std::string& output, const std::vector<std::string>& inputs, const Node* concat) const {
  const std::vector<int64_t>& shape = graph_.tensor(output).shape;
  if (graph_outputs_.count(output) || shape.size() != 4) return std::nullopt;
  for (const std::string& in : inputs) {
    auto p = packed_.find(in);
    if (p == packed_.end()) continue;
    const bool fits = concat ? is_packable_concat(graph_, *concat, p->second.block)
                             : graph_.tensor(in).shape == shape && shape[1] % p->second.block == 0;
    if (fits && !packed_reads({in}, p->second).empty()) return p->second;
  }
  return std::nullopt;
}

std::set<std::string> ModelEmitter::packed_reads(const std::vector<std::string>& inputs,
                                                 const Packed& layout) const {
  std::set<std::string> reads;
  for (const std::string& in : inputs) {
    auto p = packed_.find(in);
    if (p == packed_.end() || p->second.block != layout.block) continue;
    // A ragged conv's padded channels would shift every block after them.
    const std::vector<int64_t>& buffer = kg_.values[p->second.value].shape;
    if (buffer.size() == 5 && buffer[1] * buffer[4] == graph_.tensor(in).shape[1]) reads.insert(in);
  }
  return reads;
}

Status ModelEmitter::emit_packed_concat(const Node& node) {
  const std::optional<Packed> layout = packed_layout(node.outputs[0], node.inputs, &node);
  std::set<std::string> packed = packed_reads(node.inputs, *layout);
  // An input held in another block is repacked into this one, not unpacked to NCHW: it can then
  // be computed in place like the others (DenseNet's later layers write blocks of 16 into a
  // block-32 stack), and the copy is made once, not by every later Concat.
  std::set<std::string> repack;
  for (const std::string& in : node.inputs) {
    auto p = packed_.find(in);
    if (!packed.count(in) && p != packed_.end() && !packed_reads({in}, p->second).empty()) {
      repack.insert(in);
    }
  }
  packed.insert(repack.begin(), repack.end());
  KILN_ASSIGN_OR_RETURN(ir::Program program,
                        lower_packed_concat(graph_, node, layout->block, packed, target_info_));
  std::vector<int> values;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::string& in = node.inputs[i];
    if (packed.count(in)) {
      values.push_back(repack.count(in)
                           ? repacked_value(in, layout->block, program.buffers[i]->shape)
                           : packed_.at(in).value);
      continue;
    }
    // An NCHW input is packed as it is copied.
    ++layout_transforms_;
    KILN_ASSIGN_OR_RETURN(int v, value_of(in));
    values.push_back(v);
  }
  const std::vector<int64_t>& out_shape = program.buffers.back()->shape;
  const int out = produced_packed(node.outputs[0], out_shape, origins_of(node.inputs));
  // With a batch of one, each packed input is one contiguous range of the output: computed in
  // place where their storage allows it (compiler/concat_in_place.h), the Concat is no kernel.
  if (out_shape[0] == 1 && packed.size() == node.inputs.size() &&
      place_concat_inputs(kg_.values, values, out)) {
    mark_done(node);
    return Status::Ok();
  }
  values.push_back(out);
  add_kernel(std::move(program), std::move(values),
             node.describe() + " (NCHW" + std::to_string(layout->block) + "c)");
  mark_done(node);
  return Status::Ok();
}

Status ModelEmitter::emit_node(size_t index) {
  const Node& node = graph_.nodes[index];
  if (is_view_op(node.op_type)) return emit_view(node);
  if (node.op_type == "Concat" && packed_layout(node.outputs[0], node.inputs, &node)) {
    return emit_packed_concat(node);
  }
  // A pool of a conv's packed output stays packed (window pools) or reads it as it is (global).
  if (packed_.count(node.inputs[0]) && has_packed_pool(graph_, node) &&
      !(packed_pool_output(node) && graph_outputs_.count(node.outputs[0]))) {
    return emit_packed_pool(node);
  }
  // A Pad of zeros (DenseNet's transitions export one before each AveragePool) is its input.
  if (is_identity_pad(graph_, node)) return emit_identity(node);
  if (defer_strided_copy(index)) return Status::Ok();
  // A Transpose that moves only dimensions of one element (BERT's [1, s, d] <-> [s, 1, d]) keeps
  // its input's elements in order: a view, unless the input is packed (NCHW[b]c), where the
  // dimensions do not say the order of the elements.
  if (is_order_preserving_transpose(graph_, node) && !packed_.count(node.inputs[0])) {
    return emit_view(node);
  }
  Result<std::optional<ops::Workload>> workload = frontend::workload_of(graph_, node);
  if (!workload.ok()) return UnimplementedError(workload.status().message());
  if (*workload) return emit_tunable(index, **workload);
  if (is_elementwise(node)) return emit_elementwise(index);
  return emit_lowered(node);
}

// A graph output must own its storage (it outlives the run): one that is a view, an input or a
// constant is copied into an output value.
Status ModelEmitter::emit_output_copies() {
  for (const std::string& name : graph_.outputs) {
    const frontend::Tensor& t = graph_.tensor(name);
    if (t.dtype == frontend::DType::kInt64 && t.is_constant) {
      // A folded int64 result (ONNX Shape): returned as it is, from the constants blob.
      std::vector<float> bits(2 * t.i64.size());
      std::memcpy(bits.data(), t.i64.data(), t.i64.size() * sizeof(int64_t));
      int id = add_constant(name, t.shape, std::move(bits));
      kg_.values[id].dtype = ModelDType::kInt64;
      tensor_value_[name] = id;
      continue;
    }
    if (t.dtype != frontend::DType::kFloat32) {
      return UnimplementedError(graph_.source + ": graph output '" + name + "' is " +
                                frontend::dtype_name(t.dtype) +
                                "; compiled models return float32 tensors (and int64 constants)");
    }
    KILN_ASSIGN_OR_RETURN(int v, value_of(name));
    if (kg_.values[v].kind == ModelValueKind::kOutput) continue;
    int out = add_value(name, graph_.tensor(name).shape, ModelValueKind::kOutput);
    tensor_value_[name] = out;
    int64_t n = std::max<int64_t>(1, product(graph_.tensor(name).shape));
    add_kernel(copy_program(n, "copy_" + symbol_safe(name)), {v, out}, "copy to output " + name);
  }
  return Status::Ok();
}

void ModelEmitter::record_use(const Packed& packed, size_t consumer, EdgeUse use,
                              const std::string& tensor) {
  for (const auto& [producer, shape] : packed.origins) {
    structure_.uses.emplace(std::make_tuple(producer, consumer, use),
                            shape.empty() ? graph_.tensor(tensor).shape : shape);
  }
}

std::vector<ModelEmitter::Origin> ModelEmitter::origins_of(
    const std::vector<std::string>& inputs) const {
  std::vector<Origin> origins;
  for (const std::string& in : inputs) {
    auto p = packed_.find(in);
    if (p == packed_.end()) continue;
    for (const auto& [conv, shape] : p->second.origins) {
      origins.push_back({conv, shape.empty() ? graph_.tensor(in).shape : shape});
    }
  }
  return origins;
}

Status ModelEmitter::emit_graph() {
  fused_nodes_ =
      fold_batch_norms(&graph_) + fuse_layer_norms(&graph_) + fuse_strided_copies(&graph_);
  for (const std::string& o : graph_.outputs) graph_outputs_.insert(o);
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    std::set<std::string> seen;
    for (const std::string& in : graph_.nodes[i].inputs) {
      if (!in.empty() && seen.insert(in).second) consumers_[in].push_back(i);
    }
  }
  for (const std::string& in : graph_.inputs) done_.insert(in);
  fused_.assign(graph_.nodes.size(), false);
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (fused_[i]) continue;
    KILN_RETURN_IF_ERROR(emit_node(i));
  }
  KILN_RETURN_IF_ERROR(emit_output_copies());
  // Every graph input is an input of the model, even one no kernel reads; one that is not float32
  // data (a shape or an index given at run time) is refused by value_of.
  for (const std::string& name : graph_.inputs) KILN_RETURN_IF_ERROR(value_of(name).status());
  return Status::Ok();
}

Result<ModelArtifact> ModelEmitter::assemble(CompileReport* report) {
  ModelArtifact model;
  model.kiln_version = KILN_VERSION;
  model.target = target_.to_string();
  model.cpu_features = required_features(target_);
  for (const std::string& name : graph_.inputs) kg_.inputs.push_back(tensor_value_.at(name));
  for (const std::string& name : graph_.outputs) kg_.outputs.push_back(tensor_value_.at(name));
  auto start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(assemble_model(std::move(kg_), target_, options_.jobs, &model));
  if (report) {
    report->tasks.clear();
    report->untuned_tasks = 0;
    report->predicted_tasks = 0;
    for (auto& [key, task] : tasks_) {
      report->tasks.push_back(task);
      if (!task.tuned) ++report->untuned_tasks;
      if (task.source == ConfigSource::kPredicted) ++report->predicted_tasks;
    }
    Status runnable = builder::runs_on_host(target_);
    report->not_run_here = runnable.ok() ? "" : runnable.message();
    report->kernels = static_cast<int>(model.steps.size());
    report->fused_nodes = fused_nodes_;
    report->layout_transforms = layout_transforms_;
    report->build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return model;
}

}  // namespace

Result<ModelArtifact> compile_model(const frontend::Graph& graph, const CompileOptions& options,
                                    CompileReport* report) {
  KILN_ASSIGN_OR_RETURN(Target target, builder::parse_target(options.target));
  // The convs' configs are chosen together (the planner) before the model is emitted with them
  // (the emitter); without a store every node takes its fallback config.
  ConvPlan plan;
  const ops::TargetInfo info = describe(target).template_info();
  UntunedConfigs untuned(options.store, target.to_string(), info);
  if (options.store) {
    ModelEmitter structure(graph, target, options, /*plan=*/nullptr);
    KILN_RETURN_IF_ERROR(structure.emit_graph());
    KILN_ASSIGN_OR_RETURN(plan, plan_convs(structure.structure(), options.store, target, info,
                                           options.records, report, &untuned));
  }
  ModelEmitter emitter(graph, std::move(target), options, &plan, &untuned);
  KILN_RETURN_IF_ERROR(emitter.emit_graph());
  return emitter.assemble(report);
}

}  // namespace kiln::compiler
