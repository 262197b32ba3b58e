// Conversions between ONNX's protobuf messages and frontend/graph.h's types. Internal to
// frontend/ (the only place that includes ONNX's headers); errors name the file (`source`) and
// the node or tensor.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "common/status.h"
#include "frontend/graph.h"

namespace kiln::frontend {

// The node's op type, name, inputs, outputs and attributes (int, float, string, ints, floats).
// A graph- or tensor-valued attribute is an error naming it (no supported operator needs one,
// except Constant's `value`, which constant folding reads itself).
Result<Node> node_from_proto(const onnx::NodeProto& proto, int index, const std::string& source);

// The tensor's dtype and dims; with `with_data`, its data when it is float32 or int64 (from
// raw_data or the typed field). Data stored outside the file (external data) is an error.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, bool with_data,
                                 const std::string& source);

// An int64 or float32 constant as an initializer named tensor.name.
onnx::TensorProto tensor_to_proto(const Tensor& tensor);

// The static shape of a value's type, or an empty optional when it is not a tensor type or a
// dimension is symbolic or unknown.
std::optional<std::vector<int64_t>> static_shape(const onnx::TypeProto& type);

}  // namespace kiln::frontend
