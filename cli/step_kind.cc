#include "cli/step_kind.h"

#include <string>

#include "ops/registry.h"

namespace kiln::cli {

namespace {

// The template named in brackets in a kernel's label ("node 'x' (#3, Conv) [conv2d_NCHWc.x86]"),
// or null when there is none.
const ops::Template* labelled_template(std::string_view label) {
  for (size_t open = label.find(" ["); open != std::string_view::npos;
       open = label.find(" [", open + 1)) {
    size_t close = label.find(']', open);
    if (close == std::string_view::npos) break;
    std::string name(label.substr(open + 2, close - open - 2));
    if (const ops::Template* t = ops::find_template(name)) return t;
  }
  return nullptr;
}

}  // namespace

StepKind step_kind(const ModelStep& step) {
  std::string_view label = step.label;
  if (label.starts_with("layout ") || label.find(" (operand ") != std::string_view::npos) {
    return StepKind::kLayoutTransform;
  }
  if (!labelled_template(label)) return StepKind::kOther;
  if (label.ends_with(" epilogue")) return StepKind::kOther;
  if (std::string_view(step.symbol).ends_with("_pack_data")) return StepKind::kLayoutTransform;
  return StepKind::kTemplateKernel;
}

std::string_view step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::kTemplateKernel:
      return "template kernels";
    case StepKind::kLayoutTransform:
      return "layout transforms";
    case StepKind::kOther:
      return "other operators";
  }
  return "?";
}

}  // namespace kiln::cli
