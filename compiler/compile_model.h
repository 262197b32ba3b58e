// Graph -> compiled model (runtime/model_artifact.h): what `kiln compile` does.
//
//   fold BatchNormalization into the preceding conv's weights and bias
//   -> partition: tunable nodes (conv2d, depthwise conv2d, dense, batch_matmul) each with the
//      elementwise chain that follows them fused into their write-back; other elementwise chains
//      one kernel each; view ops aliased; every other node its own kernel (compiler/op_lowering.h)
//   -> tunable kernels from ops/ templates with the store's best config for the workload and
//      target, else a config predicted from the records of other workloads, else the
//      template's default config for the target (compiler/untuned_config.h; counted and
//      reported, never silent); the convs' configs are chosen together, among each workload's
//      best record per pair of activation blocks and the untuned config, to minimise kernel +
//      layout transform time (layout_plan.h)
//   -> build every kernel (LLVM, the builder's path) and link them into one shared object
//   -> evaluate at compile time every stage that reads only constants (weight packing), so that
//      weights ship pre-packed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/untuned_config.h"
#include "frontend/graph.h"
#include "runtime/model_artifact.h"
#include "store/record_selection.h"

namespace kiln::store {
class Store;
}

namespace kiln::compiler {

struct CompileOptions {
  std::string target = "llvm";    // as `--target` takes it
  store::Store* store = nullptr;  // best records; null: fallback configs only
  store::RecordChoice records;    // which of the store's records may serve (exact target, ...)
  int jobs = 2;                   // kernels built in parallel
};

struct CompiledTask {
  std::string template_name;
  std::string workload;
  int count = 0;               // nodes using it
  bool tuned = false;          // from the store's records of the workload
  store::RecordOrigin origin;  // where the store's record came from (when tuned)
  // tuned, else predicted from records of other workloads or the template's default config
  // (compiler/untuned_config.h); "tuned" wins when the layout plan mixes them.
  ConfigSource source = ConfigSource::kDefault;
  std::string config;  // the config's entities, as `kiln best` prints them ("a | b" when the
                       // layout plan gave its nodes different configs)
  // With a store, from its usable records: the mean time of the config chosen (its first node's),
  // and of the config a compile without records runs (the fallback template's default config);
  // nullopt where that config has no successful record.
  std::optional<double> chosen_seconds, default_seconds;
};

struct CompileReport {
  std::vector<CompiledTask> tasks;
  int untuned_tasks = 0;    // predicted + default
  int predicted_tasks = 0;  // of which predicted
  int kernels = 0;          // steps in the compiled model
  int fused_nodes = 0;      // elementwise / BatchNormalization nodes fused away
  // Layout changes left in the model: NCHW{b}c -> NCHW kernels for readers that are not convs,
  // and convs whose data arrives in another layout than their tile_ic blocks (their data
  // packing stage converts; with matching blocks it only pads).
  int layout_transforms = 0;
  // The layout plan (compiler/layout_plan.h), made when a store is given and the model has
  // convs: the conv configs chosen together to minimise kernel + transform time, and its estimate
  // of both.
  bool planned = false;
  double plan_kernel_seconds = 0;     // the chosen conv configs' recorded (or estimated) times
  double plan_transform_seconds = 0;  // the block conversions between convs the plan keeps
  int plan_transforms = 0;            // conv-to-conv edges whose blocks differ
  int plan_unmeasured_kernels = 0;    // chosen configs with no time (not in the estimate)
  std::string transform_costs;        // how the transform costs were obtained
  // Why the target's code cannot run on this machine (builder::runs_on_host), "" when it can:
  // then nothing compiled for the target ran here (constant stages ran from a host build of the
  // kernels, and transform costs are fixed estimates).
  std::string not_run_here;
  double build_seconds = 0;
};

Result<ModelArtifact> compile_model(const frontend::Graph& graph, const CompileOptions& options,
                                    CompileReport* report = nullptr);

}  // namespace kiln::compiler
