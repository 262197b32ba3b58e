// A serialized onnx.TensorProto file -> a frontend Tensor: how ONNX's backend tests store their
// inputs and expected outputs (test_data_set_N/input_M.pb, output_M.pb).
//
// The tensor keeps its name, dtype and dims; float32 and int64 data are read (from raw_data or
// the typed field float_data / int64_data), other dtypes keep only their shape and dtype, as
// graph constants do (frontend/graph.h). Errors name the file: kIo when it cannot be read,
// kInvalidArgument when its bytes are not a TensorProto with a data type, when its data does not
// match its dims, or when it points at external data.
#pragma once

#include <string>

#include "common/status.h"
#include "frontend/graph.h"

namespace kiln::frontend {

Result<Tensor> read_tensor_proto_file(const std::string& path);

}  // namespace kiln::frontend
