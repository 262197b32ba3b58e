// The configs the layout planner (compiler/layout_plan.h) chooses among for one conv workload:
// for every template of the operator that chains packed activations (Template::activation_blocks)
// and every distinct pair of blocks its records in the store imply, the fastest such record
// (the runners-up of other blocks, not only the best), as TVM's graph tuner takes each task's
// top records.
//
// The operator's fallback config is the only candidate where the workload has no record; its time
// is then unknown (`measured` false, seconds 0). Next to records it is left out: a fallback that
// was measured is one of the records already, and one that was not has no time to compare, and a
// guess must not outvote measurements.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/untuned_config.h"
#include "ops/config_space.h"
#include "ops/template.h"
#include "ops/workload.h"
#include "store/record_selection.h"

namespace kiln::store {
class Store;
}

namespace kiln::compiler {

struct ConvCandidate {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;  // normalized for tmpl
  ConfigEntity config;
  ops::ActivationBlocks blocks;
  double seconds = 0;
  bool measured = false;  // seconds is a record's mean cost (else an estimate, or 0 if unknown)
  bool fallback = false;  // no record: the operator's untuned (predicted or default) config
  store::RecordOrigin origin;  // where a measured candidate's record came from
  ConfigSource source = ConfigSource::kTuned;
};

// The template a task nothing is recorded for uses: an extra template that applies to
// `workload` and prefers it on `target` (ops::Template::preferred_untuned: the ragged conv where
// TVM's blocks leave lanes empty), else the one TVM's strategy picks when nothing is tuned: the
// first that says it is its operator's (ops::Template::untuned_choice: dense_pack.x86 for
// dense), else the first (the direct NCHWc convolutions).
const ops::Template* fallback_template(const std::vector<const ops::Template*>& templates,
                                       const ops::Workload& workload,
                                       const ops::TargetInfo& target);

// Candidates for `workload` (the records store::usable_records gives for `target` and `choice` in
// `store`, which may be null: then the untuned config alone): the records' candidates, or the
// untuned config alone, from `untuned` (null: the template's default config). Errors: a workload
// no template accepts, a store read failure.
Result<std::vector<ConvCandidate>> conv_candidates(const ops::Workload& workload,
                                                   store::Store* store, const Target& target,
                                                   const ops::TargetInfo& info,
                                                   const store::RecordChoice& choice = {},
                                                   UntunedConfigs* untuned = nullptr);

}  // namespace kiln::compiler
