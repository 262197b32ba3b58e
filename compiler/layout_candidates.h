// The configs the layout planner (compiler/layout_plan.h) chooses among for one conv workload:
// for every template of the operator that chains packed activations (Template::activation_blocks)
// and every distinct pair of blocks its records in the store imply, the fastest such record
// (the runners-up of other blocks, not only the best), and the operator's fallback config.
//
// The fallback is left out when a record has its blocks (that record is measured, in the same
// layout, and the fastest of it). Otherwise its kernel time is estimated as the median of the
// template's records for the workload (a fallback is a typical config, not a tuned one); with no
// record at all it is unknown: `measured` is false and seconds 0.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "ops/config_space.h"
#include "ops/template.h"
#include "ops/workload.h"

namespace kiln::store {
class RecordStore;
}

namespace kiln::compiler {

struct ConvCandidate {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;  // normalized for tmpl
  ConfigEntity config;
  ops::ActivationBlocks blocks;
  double seconds = 0;
  bool measured = false;  // seconds is a record's mean cost (else an estimate, or 0 if unknown)
  bool fallback = false;  // the operator's fallback config
};

// The template TVM's strategy picks when nothing is tuned: dense_pack.x86 for dense, else the
// operator's first template (the direct NCHWc convolutions).
const ops::Template* fallback_template(const std::vector<const ops::Template*>& templates);

// Candidates for `workload` (records of `target` in `store`, which may be null: then the fallback
// alone), the fallback first when it is one. Errors: a workload no template accepts, a store read
// failure.
Result<std::vector<ConvCandidate>> conv_candidates(const ops::Workload& workload,
                                                   store::RecordStore* store,
                                                   const std::string& target,
                                                   const ops::TargetInfo& info);

}  // namespace kiln::compiler
