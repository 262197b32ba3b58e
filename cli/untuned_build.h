// `kiln bench MODEL.kiln --against-untuned --onnx MODEL.onnx`'s baseline: the same ONNX model
// compiled now for the artifact's target with no record store, so every task gets kiln's default
// config (what `kiln compile` without --db makes). kiln-runner builds nothing and has no such
// option.
#pragma once

#include <string>
#include <vector>

#include "runtime/model_artifact.h"

namespace kiln::cli {

// The untuned build of `onnx` for `target`; `input_shapes` (NAME=DIMS, as --input-shape) fix
// symbolic dimensions to the tuned artifact's. Exits with kiln's usual messages on a model or
// target that cannot be read or built.
ModelArtifact untuned_build(const std::string& onnx, const std::string& target,
                            const std::vector<std::string>& input_shapes);

}  // namespace kiln::cli
