#include "frontend/tensor_file.h"

#include <onnx/onnx_pb.h>

#include "common/safe_file.h"
#include "frontend/onnx_convert.h"

namespace kiln::frontend {

Result<Tensor> read_tensor_proto_file(const std::string& path) {
  // Protobuf parses at most 2 GiB.
  KILN_ASSIGN_OR_RETURN(const std::string bytes,
                        read_regular_file(path, int64_t{2} << 30, "tensor file"));
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
