// A task: one tuning problem (DESIGN.md "Contracts") = a template (operator and schedule, with
// TVM's task name) + its normalized workload + the target. key() is the one canonical string
// that identifies a task wherever kiln needs one (caches, the runner's prepared tasks, record
// lookups): equal keys mean the same tuning problem.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/wire.h"
#include "exchange/target.h"
#include "ops/template.h"
#include "ops/workload.h"

namespace kiln {

struct Task {
  const ops::Template* tmpl = nullptr;  // from the registry (ops/registry.h) or a test's own
  ops::Workload workload;               // normalized by tmpl
  Target target;

  // task_key(template name, workload text, target text).
  std::string key() const;
  // The template's FLOP count for the workload. REQUIRES tmpl.
  double flop() const { return tmpl->flop(workload); }

  // The task header on the wire: template name, workload text, target.
  void encode(wire::Writer& w) const;
  // Reads a header written by encode(). The template must be registered (ops::find_template) and
  // the workload already normalized by it, so that nothing unchecked reaches a template. Errors
  // (kInvalidArgument) name the malformed frame, the unknown template or the bad workload.
  static Result<Task> decode(wire::Reader& r);
};

// The canonical key of the task (template_name, workload, target) as a record stores them
// (store::Record's task_name, workload and target): "dense_pack.x86|dense:K=64,M=64,N=64|llvm
// -mcpu=znver5". '|' appears in none of the three parts.
std::string task_key(std::string_view template_name, std::string_view workload,
                     std::string_view target);

// Target on the wire (part of the task header).
void encode_target(const Target& target, wire::Writer& w);
Target decode_target(wire::Reader& r);  // check r.ok() afterwards

}  // namespace kiln
