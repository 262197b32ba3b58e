#include "frontend/onnx_convert.h"

#include <cstring>

namespace kiln::frontend {

namespace {

template <typename T>
Status read_raw(const onnx::TensorProto& proto, int64_t count, const std::string& where,
                std::vector<T>* out) {
  const std::string& raw = proto.raw_data();
  if (raw.size() != static_cast<size_t>(count) * sizeof(T)) {
    return InvalidArgument(where + ": raw_data holds " + std::to_string(raw.size()) +
                           " bytes, its shape needs " + std::to_string(count * sizeof(T)));
  }
  out->resize(count);
  if (count > 0) std::memcpy(out->data(), raw.data(), raw.size());  // ONNX data is little-endian
  return Status::Ok();
}

}  // namespace

Result<Node> node_from_proto(const onnx::NodeProto& proto, int index, const std::string& source) {
  Node node;
  node.op_type = proto.op_type();
  node.name = proto.name();
  node.index = index;
  node.inputs.assign(proto.input().begin(), proto.input().end());
  node.outputs.assign(proto.output().begin(), proto.output().end());
  for (const onnx::AttributeProto& a : proto.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT:
        node.attrs[a.name()] = static_cast<int64_t>(a.i());
        break;
      case onnx::AttributeProto::FLOAT:
        node.attrs[a.name()] = a.f();
        break;
      case onnx::AttributeProto::STRING:
        node.attrs[a.name()] = a.s();
        break;
      case onnx::AttributeProto::INTS:
        node.attrs[a.name()] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
        break;
      case onnx::AttributeProto::FLOATS:
        node.attrs[a.name()] = std::vector<float>(a.floats().begin(), a.floats().end());
        break;
      default:
        if (node.op_type == "Constant") break;  // its value is read by constant folding
        return UnimplementedError(source + ": " + node.describe() + ": attribute '" + a.name() +
                                  "' has a type kiln does not read (graph, tensor or sparse)");
    }
  }
  return node;
}

Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, bool with_data,
                                 const std::string& source) {
  Tensor t;
  t.name = proto.name();
  t.dtype = static_cast<DType>(proto.data_type());
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  t.is_constant = true;
  std::string where = source + ": initializer '" + t.name + "'";
  for (int64_t d : t.shape) {
    if (d < 0) return InvalidArgument(where + ": negative dimension " + std::to_string(d));
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return InvalidArgument(where +
                           ": its data is stored in an external file, which kiln does not read "
                           "(save the model with its weights inside the .onnx file)");
  }
  if (!with_data) return t;
  int64_t count = t.num_elements();
  if (t.dtype == DType::kFloat32) {
    if (proto.has_raw_data()) {
      KILN_RETURN_IF_ERROR(read_raw(proto, count, where, &t.f32));
    } else {
      t.f32.assign(proto.float_data().begin(), proto.float_data().end());
    }
    if (static_cast<int64_t>(t.f32.size()) != count) {
      return InvalidArgument(where + ": holds " + std::to_string(t.f32.size()) +
                             " floats, its shape needs " + std::to_string(count));
    }
  } else if (t.dtype == DType::kInt64) {
    if (proto.has_raw_data()) {
      KILN_RETURN_IF_ERROR(read_raw(proto, count, where, &t.i64));
    } else {
      t.i64.assign(proto.int64_data().begin(), proto.int64_data().end());
    }
    if (static_cast<int64_t>(t.i64.size()) != count) {
      return InvalidArgument(where + ": holds " + std::to_string(t.i64.size()) +
                             " int64 values, its shape needs " + std::to_string(count));
    }
  }
  return t;
}

onnx::TensorProto tensor_to_proto(const Tensor& tensor) {
  onnx::TensorProto proto;
  proto.set_name(tensor.name);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype));
  for (int64_t d : tensor.shape) proto.add_dims(d);
  if (tensor.dtype == DType::kInt64) {
    proto.mutable_int64_data()->Add(tensor.i64.begin(), tensor.i64.end());
  } else if (tensor.dtype == DType::kFloat32) {
    proto.mutable_float_data()->Add(tensor.f32.begin(), tensor.f32.end());
  }
  return proto;
}

std::optional<std::vector<int64_t>> static_shape(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> shape;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

}  // namespace kiln::frontend
