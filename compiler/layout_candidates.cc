#include "compiler/layout_candidates.h"

#include <algorithm>
#include <map>
#include <utility>

#include "ops/registry.h"
#include "store/record_selection.h"
#include "store/store.h"

namespace kiln::compiler {

const ops::Template* fallback_template(const std::vector<const ops::Template*>& templates,
                                       const ops::Workload& workload,
                                       const ops::TargetInfo& target) {
  for (const ops::Template* t : templates) {
    if (!t->extra()) continue;
    Result<ops::Workload> w = t->normalize(workload);
    if (w.ok() && t->preferred_untuned(*w, target)) return t;
  }
  for (const ops::Template* t : templates) {
    if (t->untuned_choice()) return t;
  }
  return templates.empty() ? nullptr : templates.front();
}

Result<std::vector<ConvCandidate>> conv_candidates(const ops::Workload& workload,
                                                   store::Store* store, const Target& target,
                                                   const ops::TargetInfo& info,
                                                   const store::RecordChoice& choice,
                                                   UntunedConfigs* untuned) {
  std::vector<const ops::Template*> templates = ops::templates_for_op(workload.op);
  const ops::Template* fallback_tmpl = fallback_template(templates, workload, info);
  if (!fallback_tmpl) return InternalError("no template for operator " + workload.op);

  std::vector<ConvCandidate> best_per_blocks;  // records only, in the order first seen
  for (const ops::Template* tmpl : templates) {
    if (!store) break;
    // An extra template (Winograd) applies to some workloads only, and competes only with
    // measured records of the TVM templates (they come first), as choose_config rules.
    if (tmpl->extra() && (best_per_blocks.empty() || !tmpl->normalize(workload).ok())) continue;
    KILN_ASSIGN_OR_RETURN(ops::Workload w, tmpl->normalize(workload));
    KILN_ASSIGN_OR_RETURN(store::UsableRecords usable,
                          store::usable_records(*store, *tmpl, w, target, choice));
    ConfigSpace space = tmpl->space(w);
    for (const store::Record& r : usable.records) {
      Result<ConfigEntity> config = space.from_json_entities(r.entities);
      if (!config.ok()) continue;  // a record of another space version: not usable here
      std::optional<ops::ActivationBlocks> blocks = tmpl->activation_blocks(w, *config);
      if (!blocks) continue;
      double cost = r.mean_cost();
      auto same = std::find_if(
          best_per_blocks.begin(), best_per_blocks.end(),
          [&](const ConvCandidate& c) { return c.tmpl == tmpl && c.blocks == *blocks; });
      if (same != best_per_blocks.end() && same->seconds <= cost) continue;
      ConvCandidate candidate{
          tmpl, w, std::move(config).value(), *blocks, cost, true, false, usable.origin};
      if (same != best_per_blocks.end()) {
        *same = std::move(candidate);
      } else {
        best_per_blocks.push_back(std::move(candidate));
      }
    }
  }
  // The fallback's time is unknown unless it was measured, and then it is one of the records:
  // it is a candidate only where nothing is recorded (a guess must not outvote measurements).
  std::vector<ConvCandidate> out;
  if (best_per_blocks.empty()) {
    KILN_ASSIGN_OR_RETURN(ops::Workload fallback_w, fallback_tmpl->normalize(workload));
    ConvCandidate fallback;
    fallback.tmpl = fallback_tmpl;
    fallback.workload = fallback_w;
    if (untuned) {
      KILN_ASSIGN_OR_RETURN(UntunedConfig chosen, untuned->choose(*fallback_tmpl, fallback_w));
      fallback.config = std::move(chosen.config);
      fallback.source = chosen.source;
    } else {
      fallback.config =
          fallback_tmpl->default_config(fallback_w, fallback_tmpl->space(fallback_w), info);
      fallback.source = ConfigSource::kDefault;
    }
    fallback.fallback = true;
    std::optional<ops::ActivationBlocks> fallback_blocks =
        fallback_tmpl->activation_blocks(fallback_w, fallback.config);
    if (!fallback_blocks) {
      return InternalError(std::string(fallback_tmpl->name()) +
                           ": its untuned config implies no activation blocks");
    }
    fallback.blocks = *fallback_blocks;
    out.push_back(std::move(fallback));
  }
  for (ConvCandidate& c : best_per_blocks) out.push_back(std::move(c));
  return out;
}

}  // namespace kiln::compiler
