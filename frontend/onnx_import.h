// ONNX import: an .onnx file -> a Graph (frontend/graph.h) with static shapes, constant
// sub-graphs folded, every operator supported and every compute path in float32.
//
//   parse (protobuf) -> opset 11..17 -> ONNX checker -> supported operators -> graph structure
//   and window attributes (frontend/model_checks.h) -> fix symbolic input dimensions
//   (ImportOptions::input_shapes) -> repeat { ONNX shape inference, constant folding } until
//   nothing folds -> Graph, checking that every shape is static and every data tensor float32
//   -> the operand shapes of tunable operators (model_checks.h).
//
// Every failure is a Status naming the file and, where there is one, the node (its name, index
// and op type) or tensor: a file that is not ONNX or is truncated, a model the checker rejects,
// an unsupported operator (with the list of supported ones), a non-float32 tensor in a compute
// path, a symbolic input dimension without a shape for it, a shape that cannot be inferred.
// What kiln does not support in a valid model (an operator, the opset, a non-float32 tensor in a
// compute path, a shape that cannot be inferred statically, a graph-valued attribute) is
// kUnimplemented; a file that is not a valid model, or a bad input shape, is kInvalidArgument.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "frontend/graph.h"

namespace kiln::frontend {

struct ImportOptions {
  // Full shapes of graph inputs, by name, for inputs with symbolic dimensions (e.g. a batch
  // dimension "N"). A given shape must have the input's rank and agree with its fixed dimensions.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Graph inputs bound to fixed values before shape inference, as TVM's freeze_params binds
  // them: they become constants (e.g. the int64 shape, axes or indices inputs of ONNX's node
  // tests, which kiln needs at compile time). Each must name a graph input and match its dtype
  // and shape; float32 and int64 tensors only.
  std::map<std::string, Tensor> bound_inputs = {};
};

Result<Graph> import_onnx(const std::string& path, const ImportOptions& options = {});

// Parses `name=1x3x224x224` (the form of `kiln tasks --input-shape`).
Result<std::pair<std::string, std::vector<int64_t>>> parse_input_shape(std::string_view text);

}  // namespace kiln::frontend
