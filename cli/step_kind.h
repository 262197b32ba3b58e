// What each step of a compiled model is, read from the labels and stage names compile_model
// gives them (compiler/compile_model.cc), for `kiln bench --profile`'s time per kind:
//   kTemplateKernel   the compute stage of a tunable template's kernel ("... [conv2d_NCHWc.x86]"),
//                     with the elementwise chain fused into its write-back
//   kLayoutTransform  data moved into another layout: NCHW{b}c -> NCHW unpacking ("layout ..."),
//                     a template kernel's data packing stage (*_pack_data: padding, and blocking
//                     when the producer's blocks differ), a matrix operand's relayout ("(operand
//                     X)")
//   kOther            every other operator: pooling, elementwise chains not fused, softmax,
//                     a template kernel's separate epilogue, ...
#pragma once

#include <string_view>

#include "runtime/model_artifact.h"

namespace kiln::cli {

enum class StepKind { kTemplateKernel, kLayoutTransform, kOther };

StepKind step_kind(const ModelStep& step);
std::string_view step_kind_name(StepKind kind);  // "template kernels", "layout transforms", ...

}  // namespace kiln::cli
