// Checks of a model that ONNX's checker and shape inference leave to the importer, so that a
// hostile or careless model is refused at import (kInvalidArgument naming the file, the node and
// what is wrong) instead of crashing ONNX's inference or compiling into kernels that read out of
// bounds:
//   check_graph_structure  before inference: the graph has nodes; every graph output is a tensor
//                          some node, initializer or input makes, and no output is a graph input
//   check_window_attributes  before inference (ONNX divides by them): Conv, MaxPool and
//                          AveragePool strides, dilations and kernel_shape >= 1, pads >= 0,
//                          group >= 1
//   check_operands         after inference, on the Graph: the operands of every tunable
//                          operator (Conv, Gemm, MatMul) agree with each other (channels and
//                          groups, kernel_shape against the weight, the bias, the reduction
//                          length) and fit kiln's workload limits (ops/limits.h)
#pragma once

#include <string>

#include "common/status.h"
#include "frontend/graph.h"

namespace onnx {
class GraphProto;
}

namespace kiln::frontend {

Status check_graph_structure(const onnx::GraphProto& graph, const std::string& source);
Status check_window_attributes(const onnx::GraphProto& graph, const std::string& source);
Status check_operands(const Graph& graph);

}  // namespace kiln::frontend
