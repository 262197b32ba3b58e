// The operator registry: every operator kiln knows (ops/operator.h: its ONNX mapping, argument
// binding and TVM args) and every schedule template (ops/template.h), by TVM task name and by
// operator. The frontend, compiler, store, CLI and daemon find operators here, never by name in
// their own code.
//
// kiln's own operators and templates are listed in registry.cc (that list fixes their order, and
// makes the static library keep their files). An extension (a test-only operator) registers
// itself from its one file with a file-scope `static const ops::Registration`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ops/operator.h"
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

// All operators, in a fixed order (kiln's own: conv2d, depthwise_conv2d, dense, batch_matmul;
// then registered ones in registration order).
const std::vector<const Operator*>& all_operators();

// Adds an operator. REQUIRES: as register_template. The operator must outlive the process.
void register_operator(const Operator* op);

// The operator named `name` (a workload's op), or nullptr.
const Operator* find_operator(std::string_view name);

// Whether naming operator `selected` in a selection selects workloads of operator `op`: the same
// name, or one of its Operator::also_selects (conv2d selects depthwise_conv2d). False for a name
// that is no operator's.
bool operator_selects(std::string_view selected, std::string_view op);

// "conv2d, depthwise_conv2d, dense, batch_matmul": the operators' names, for messages and help.
std::string operator_names();

// Registers an extension's operator and templates during static initialization, before main
// starts any builder or runner worker (those run the same binary, so register them too).
struct Registration {
  Registration(const Operator* op, const std::vector<const Template*>& templates);
};

// Each operator file defines its operator's and templates' accessors; the registry lists them.
const Operator& conv2d_operator();
const Operator& depthwise_conv2d_operator();
const Operator& dense_operator();
const Operator& batch_matmul_operator();
const Operator& group_conv2d_operator();
const Template& dense_nopack_template();
const Template& dense_pack_template();
const Template& dense_pack_ragged_template();
const Template& conv2d_nchwc_template();
const Template& depthwise_conv2d_nchwc_template();
const Template& batch_matmul_template();
const Template& conv2d_winograd_template();
const Template& conv2d_ragged_template();
const Template& conv2d_flat_template();
const Template& group_conv2d_template();

}  // namespace kiln::ops
