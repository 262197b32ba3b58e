#include "compiler/model_planner.h"

#include <cstdio>
#include <string>

#include "builder/target.h"
#include "compiler/layout_candidates.h"
#include "compiler/transform_costs.h"
#include "ops/conv_common.h"

namespace kiln::compiler {

namespace {

// Whether the conv reads data that arrives in its own block in place: its program under that
// layout has no data packing stage.
bool reads_data_in_place(const ConvCandidate& c, const ops::TargetInfo& info) {
  Result<ir::Program> program = c.tmpl->instantiate(c.workload, c.config, info, {c.blocks.in});
  return program.ok() && !ops::conv::packs_data(*program);
}

}  // namespace

Result<ConvPlan> plan_convs(const ConvStructure& structure, store::Store* store,
                            const Target& target, const ops::TargetInfo& info,
                            const store::RecordChoice& choice, CompileReport* report,
                            UntunedConfigs* untuned) {
  std::vector<std::vector<ConvCandidate>> candidates;
  std::vector<bool> in_place;    // per node: reads_data_in_place of its first candidate
  std::vector<bool> own_chunks;  // per node: a group or depthwise conv (PlanEdge::own_chunks)
  std::vector<PlanNode> nodes;
  std::map<size_t, int> plan_index;
  bool any_choice = false;
  for (const ConvStructure::Conv& conv : structure.convs) {
    KILN_ASSIGN_OR_RETURN(std::vector<ConvCandidate> cands,
                          conv_candidates(conv.workload, store, target, info, choice, untuned));
    PlanNode n;
    for (const ConvCandidate& c : cands) {
      n.candidates.push_back({c.blocks.in, c.blocks.out, c.seconds});
    }
    any_choice = any_choice || cands.size() > 1;
    plan_index[conv.node] = static_cast<int>(nodes.size());
    nodes.push_back(std::move(n));
    in_place.push_back(reads_data_in_place(cands.front(), info));
    own_chunks.push_back(conv.workload.op == "group_conv2d" ||
                         conv.workload.op == "depthwise_conv2d");
    candidates.push_back(std::move(cands));
  }
  std::vector<PlanEdge> edges;
  for (const auto& [key, shape] : structure.uses) {
    const int consumer = plan_index.at(std::get<1>(key));
    edges.push_back({plan_index.at(std::get<0>(key)), consumer, std::get<2>(key), shape,
                     in_place[consumer], own_chunks[consumer]});
  }

  // Transform costs: measured on this machine when there is a choice to make.
  TransformCosts costs = TransformCosts::estimated();
  std::string costs_note = "not measured: no conv had a choice of blocks";
  Status runnable = builder::runs_on_host(target);
  if (any_choice && !runnable.ok()) {
    // The host's timings say nothing of another CPU's, and its kernels must not run here.
    costs_note = "fixed estimates, not measured: " + runnable.message();
  } else if (any_choice) {
    Result<TransformCosts> measured = TransformCosts::measure(builder::host_target());
    if (measured.ok()) {
      costs = std::move(measured).value();
      char text[96];
      std::snprintf(text, sizeof(text), "measured on this machine in %.2f s",
                    costs.measure_seconds());
      costs_note = text;
    } else {
      costs_note = "estimated (measuring failed: " + measured.status().message() + ")";
    }
  }
  KILN_ASSIGN_OR_RETURN(
      LayoutPlan plan,
      plan_layouts(nodes, edges,
                   [&](const std::vector<int64_t>& shape, int64_t from, int64_t to, bool whole) {
                     return costs.seconds(shape, from, to, whole);
                   }));
  ConvPlan out;
  int unmeasured = 0;
  for (size_t i = 0; i < structure.convs.size(); ++i) {
    const ConvCandidate& c = candidates[i][plan.choice[i]];
    out[structure.convs[i].node] = {c.tmpl, c.workload, c.config, !c.fallback, c.origin, c.source};
    if (!c.measured) ++unmeasured;
  }
  if (report && !nodes.empty()) {
    report->planned = true;
    report->plan_kernel_seconds = plan.kernel_seconds;
    report->plan_transform_seconds = plan.transform_seconds;
    report->plan_transforms = plan.transforms;
    report->plan_unmeasured_kernels = unmeasured;
    report->transform_costs = costs_note;
  }
  return out;
}

}  // namespace kiln::compiler
