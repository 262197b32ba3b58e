// A kiln workload <-> the `args` of a TVM task (autotvm.md §2), through the task's template.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"
#include "ops/template.h"
#include "ops/workload.h"

namespace kiln::store {

// The template of a TVM task name, or an error listing the known ones.
Result<const ops::Template*> template_for_task(std::string_view task_name);

// Parses and normalizes a kiln workload text for `tmpl` (the result is what records store).
Result<ops::Workload> normalized_workload(const ops::Template& tmpl, std::string_view workload);

// TVM args -> the normalized kiln workload (by the template's operator, ops/operator.h), then
// checks that the
// template serializes the workload back to exactly `args` (so a dtype, layout or padding kiln
// cannot represent is an error rather than a silently different workload).
Result<ops::Workload> workload_from_tvm_args(const ops::Template& tmpl, const nlohmann::json& args);

}  // namespace kiln::store
