#include "ops/registry.h"

namespace kiln::ops {

namespace {

std::vector<const Template*>& registry() {
  static std::vector<const Template*> templates = {
      &dense_nopack_template(),      &dense_pack_template(),
      &conv2d_nchwc_template(),      &depthwise_conv2d_nchwc_template(),
      &batch_matmul_template(),      &conv2d_winograd_template(),
      &conv2d_ragged_template(),     &group_conv2d_template(),
      &dense_pack_ragged_template(), &conv2d_flat_template()};
  return templates;
}

std::vector<const Operator*>& operators() {
  static std::vector<const Operator*> list = {&conv2d_operator(), &depthwise_conv2d_operator(),
                                              &dense_operator(), &batch_matmul_operator(),
                                              &group_conv2d_operator()};
  return list;
}

// The entry of `list` named `name` (templates and operators alike), or nullptr.
template <class T>
const T* named(const std::vector<const T*>& list, std::string_view name) {
  for (const T* entry : list) {
    if (entry->name() == name) return entry;
  }
  return nullptr;
}

}  // namespace

const std::vector<const Template*>& all_templates() { return registry(); }

const std::vector<const Operator*>& all_operators() { return operators(); }

void register_operator(const Operator* op) {
  if (!find_operator(op->name())) operators().push_back(op);
}

const Operator* find_operator(std::string_view name) { return named(all_operators(), name); }

bool operator_selects(std::string_view selected, std::string_view op) {
  const Operator* named_op = find_operator(selected);
  if (!named_op) return false;
  if (selected == op) return true;
  for (std::string_view also : named_op->also_selects()) {
    if (also == op) return true;
  }
  return false;
}

std::string operator_names() {
  std::string names;
  for (const Operator* op : all_operators()) {
    names += (names.empty() ? "" : ", ") + std::string(op->name());
  }
  return names;
}

Registration::Registration(const Operator* op, const std::vector<const Template*>& templates) {
  register_operator(op);
  for (const Template* t : templates) register_template(t);
}

void register_template(const Template* tmpl) {
  if (!find_template(tmpl->name())) registry().push_back(tmpl);
}

const Template* find_template(std::string_view name) { return named(all_templates(), name); }

std::vector<const Template*> templates_for_op(std::string_view op) {
  std::vector<const Template*> out;
  for (const Template* t : all_templates()) {
    if (t->op() == op) out.push_back(t);
  }
  return out;
}

Result<std::vector<const Template*>> resolve_templates(const Workload& w,
                                                       std::string_view template_name) {
  std::vector<const Template*> candidates = templates_for_op(w.op);
  if (candidates.empty()) {
    std::string known;
    for (const Template* t : all_templates()) {
      if (known.find(std::string(t->op())) == std::string::npos) {
        known += (known.empty() ? "" : ", ") + std::string(t->op());
      }
    }
    return InvalidArgument("unknown operator '" + w.op + "' (known: " + known + ")");
  }
  if (template_name.empty()) {
    // TVM's templates: an extra template is tuned only when named (Template::extra).
    std::vector<const Template*> tvm;
    for (const Template* t : candidates) {
      if (!t->extra()) tvm.push_back(t);
    }
    return tvm;
  }
  for (const Template* t : candidates) {
    if (t->name() == template_name) return std::vector<const Template*>{t};
  }
  std::string names;
  for (const Template* t : candidates)
    names += (names.empty() ? "" : ", ") + std::string(t->name());
  return InvalidArgument("template '" + std::string(template_name) + "' is not a template of " +
                         w.op + " (its templates: " + names + ")");
}

}  // namespace kiln::ops
