#include "frontend/tensor_file.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <sstream>

#include "frontend/onnx_convert.h"

namespace kiln::frontend {

Result<Tensor> read_tensor_proto_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open tensor file '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return IoError("cannot read tensor file '" + path + "'");
  const std::string bytes = std::move(buffer).str();
  onnx::TensorProto proto;
  // An empty message parses (every field at its default), hence the data type check: a real
  // tensor always has one.
  if (!proto.ParseFromString(bytes) || proto.data_type() == onnx::TensorProto::UNDEFINED) {
    return InvalidArgument(path + ": not a serialized ONNX TensorProto (its " +
                           std::to_string(bytes.size()) +
                           " bytes do not parse as one, or it has no data type)");
  }
  return tensor_from_proto(proto, /*with_data=*/true, path);
}

}  // namespace kiln::frontend
