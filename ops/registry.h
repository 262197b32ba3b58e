// The operator registry: every schedule template kiln knows, by TVM task name and by operator.
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"
#include "ops/template.h"

namespace kiln::ops {

// All templates, in a fixed order (kiln's own, then registered ones in registration order).
const std::vector<const Template*>& all_templates();

// Adds a template (test-only operators, extensions). REQUIRES: called before templates are
// looked up concurrently, and before builder or runner worker processes are started (they find
// templates by name in their own copy of the registry). The template must outlive the process.
void register_template(const Template* tmpl);

// The template with TVM task name `name` (e.g. "dense_pack.x86"), or nullptr.
const Template* find_template(std::string_view name);

// The templates of an operator (e.g. "dense" -> dense_nopack.x86, dense_pack.x86), TVM's
// templates first, then kiln's extra ones (conv2d -> conv2d_NCHWc.x86,
// conv2d_NCHWc_winograd.x86).
std::vector<const Template*> templates_for_op(std::string_view op);

// Resolves a workload and an optional template name to the templates to use: the operator's
// TVM templates (not the extra ones, Template::extra) when `template_name` is empty. Errors name an
// unknown operator or a template that does not belong to the operator.
Result<std::vector<const Template*>> resolve_templates(const Workload& w,
                                                       std::string_view template_name);

// Each operator file defines its templates' accessor; the registry lists them.
const Template& dense_nopack_template();
const Template& dense_pack_template();
const Template& conv2d_nchwc_template();
const Template& depthwise_conv2d_nchwc_template();
const Template& batch_matmul_template();
const Template& conv2d_winograd_template();

}  // namespace kiln::ops
