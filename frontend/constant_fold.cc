#include "frontend/constant_fold.h"

#include <map>
#include <optional>

#include "frontend/onnx_convert.h"
#include "frontend/shape_arith.h"

namespace kiln::frontend {

namespace {

// The tensor a Constant node defines, named after its output; nullopt for the forms kiln does
// not fold (sparse_value, strings), which then stay nodes.
std::optional<onnx::TensorProto> constant_value(const onnx::NodeProto& node) {
  if (node.output_size() != 1) return std::nullopt;
  onnx::TensorProto t;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "value" && a.has_t()) {
      t = a.t();
    } else if (a.name() == "value_float") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_float_data(a.f());
    } else if (a.name() == "value_floats") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_dims(a.floats_size());
      *t.mutable_float_data() = a.floats();
    } else if (a.name() == "value_int") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_int64_data(a.i());
    } else if (a.name() == "value_ints") {
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_dims(a.ints_size());
      *t.mutable_int64_data() = a.ints();
    } else {
      return std::nullopt;
    }
  }
  t.set_name(node.output(0));
  return t;
}

}  // namespace

Result<int> fold_constants(onnx::ModelProto* model, int64_t opset, std::vector<int>* node_index,
                           const std::string& source) {
  onnx::GraphProto* graph = model->mutable_graph();
  std::map<std::string, Tensor> int64_constants;  // the values folding can compute with
  std::map<std::string, std::vector<int64_t>> shapes;
  auto add_constant = [&](const onnx::TensorProto& t) -> Status {
    shapes[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    if (t.data_type() != onnx::TensorProto::INT64) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(Tensor value, tensor_from_proto(t, /*with_data=*/true, source));
    int64_constants[t.name()] = std::move(value);
    return Status::Ok();
  };
  for (const onnx::TensorProto& t : graph->initializer()) KILN_RETURN_IF_ERROR(add_constant(t));
  auto add_shape = [&](const onnx::ValueInfoProto& v) {
    if (auto s = static_shape(v.type()); s && !shapes.count(v.name())) shapes[v.name()] = *s;
  };
  for (const auto& v : graph->input()) add_shape(v);
  for (const auto& v : graph->value_info()) add_shape(v);
  for (const auto& v : graph->output()) add_shape(v);

  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::vector<int> kept_index;
  int folded = 0;
  for (int k = 0; k < graph->node_size(); ++k) {
    onnx::NodeProto& proto = *graph->mutable_node(k);
    int index = (*node_index)[k];
    std::optional<onnx::TensorProto> value;
    if (proto.op_type() == "Constant") {
      value = constant_value(proto);
    } else if (is_foldable_op(proto.op_type()) && proto.output_size() == 1) {
      KILN_ASSIGN_OR_RETURN(Node node, node_from_proto(proto, index, source));
      Tensor shape_only;  // Shape's input: only its shape is read
      std::vector<const Tensor*> inputs;
      bool all_known = node.inputs.size() > 0;
      for (const std::string& name : node.inputs) {
        if (name.empty()) {
          inputs.push_back(nullptr);
        } else if (node.op_type == "Shape" && shapes.count(name)) {
          shape_only.name = name;
          shape_only.shape = shapes[name];
          inputs.push_back(&shape_only);
        } else if (auto it = int64_constants.find(name); it != int64_constants.end()) {
          inputs.push_back(&it->second);
        } else {
          all_known = false;
        }
      }
      if (all_known) {
        KILN_ASSIGN_OR_RETURN(Tensor out, evaluate_int64(node, inputs, opset));
        value = tensor_to_proto(out);
      }
    }
    if (value) {
      KILN_RETURN_IF_ERROR(add_constant(*value));
      *graph->add_initializer() = std::move(*value);
      ++folded;
    } else {
      *kept.Add() = std::move(proto);
      kept_index.push_back(index);
    }
  }
  graph->mutable_node()->Swap(&kept);
  *node_index = std::move(kept_index);
  return folded;
}

}  // namespace kiln::frontend
