// The planner of `kiln compile` (compiler/compile_model.h): chooses the convs' templates,
// workloads and configs together, to minimise kernel + layout transform time over the graph
// (compiler/layout_plan.h), among each workload's best record per pair of activation blocks and
// its fallback (compiler/layout_candidates.h). It sees the model as the emitter's structure pass
// found it (ConvStructure); the emitter then emits the model with the plan (ConvPlan).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "common/status.h"
#include "compiler/compile_model.h"
#include "compiler/layout_plan.h"
#include "exchange/target.h"
#include "ops/config_space.h"
#include "ops/template.h"
#include "ops/workload.h"
#include "store/record_selection.h"

namespace kiln::compiler {

// A tunable node's kernel: its template, the workload normalized for it, and the config.
struct TunableChoice {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;
  ConfigEntity config;
  bool tuned = false;          // a record's config (planned choices only)
  store::RecordOrigin origin;  // where that record came from
  ConfigSource source = ConfigSource::kDefault;
};

// The conv nodes of a model and how they read each other's packed outputs. It does not depend on
// the configs (only the blocks do), so emitting with fallback configs finds it.
struct ConvStructure {
  struct Conv {
    size_t node = 0;  // graph node index
    ops::Workload workload;
  };
  std::vector<Conv> convs;  // in emission (topological) order
  // (producer, consumer, use) of conv nodes -> the NCHW shape of the tensor read.
  std::map<std::tuple<size_t, size_t, EdgeUse>, std::vector<int64_t>> uses;
};

// Conv node index -> its planned kernel.
using ConvPlan = std::map<size_t, TunableChoice>;

// The plan for `structure` from the store's records for `target` (store::usable_records). Fills the
// report's plan fields (planned, plan_*, transform_costs) when the model has convs. Transform costs
// are measured on this machine when some conv has a choice of blocks and the target's code runs
// here. `untuned` gives the configs of workloads without records (null: their default configs).
Result<ConvPlan> plan_convs(const ConvStructure& structure, store::Store* store,
                            const Target& target, const ops::TargetInfo& info,
                            const store::RecordChoice& choice, CompileReport* report,
                            UntunedConfigs* untuned = nullptr);

}  // namespace kiln::compiler
