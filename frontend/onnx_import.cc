#include "frontend/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "common/safe_file.h"
#include "frontend/constant_fold.h"
#include "frontend/model_checks.h"
#include "frontend/onnx_convert.h"
#include "frontend/supported_ops.h"

namespace kiln::frontend {

namespace {

// ONNX's messages span lines ("... ==> Context: ..."); kiln's errors are one line.
std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

Result<onnx::ModelProto> parse_model(const std::string& path) {
  // Protobuf parses at most 2 GiB. A model that cannot be read is bad input here (exit 2).
  Result<std::string> read = read_regular_file(path, int64_t{2} << 30, "model file");
  if (!read.ok()) return InvalidArgument(read.status().message());
  KILN_ASSIGN_OR_RETURN(std::string bytes, std::move(read));
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes)) {
    return InvalidArgument(path + ": not an ONNX model, or a truncated one (its " +
                           std::to_string(bytes.size()) +
                           " bytes do not parse as an ONNX ModelProto)");
  }
  if (model.ir_version() <= 0 || !model.has_graph()) {
    return InvalidArgument(path + ": not an ONNX model (no IR version or no graph)");
  }
  return model;
}

// A model of an opset older than kiln reads is upgraded to kMinOpset with ONNX's own version
// converter (operators whose semantics changed are rewritten by its adapters); a model it cannot
// convert keeps its opset and is refused by default_opset.
Status upgrade_old_opset(onnx::ModelProto* model, const std::string& source) {
  for (const onnx::OperatorSetIdProto& id : model->opset_import()) {
    if (!is_default_domain(id.domain()) || id.version() >= kMinOpset) continue;
    try {
      *model = onnx::version_conversion::ConvertVersion(*model, static_cast<int>(kMinOpset));
    } catch (const std::exception& e) {
      return UnimplementedError(
          source + ": ONNX opset " + std::to_string(id.version()) +
          " is not supported (kiln reads opsets " + std::to_string(kMinOpset) + " to " +
          std::to_string(kMaxOpset) +
          ", and ONNX's version converter could not upgrade it: " + one_line(e.what()) + ")");
    }
    break;
  }
  return Status::Ok();
}

Result<int64_t> default_opset(const onnx::ModelProto& model, const std::string& source) {
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (!is_default_domain(id.domain())) continue;
    if (id.version() < kMinOpset || id.version() > kMaxOpset) {
      return UnimplementedError(source + ": ONNX opset " + std::to_string(id.version()) +
                                " is not supported (kiln reads opsets " +
                                std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                                ")");
    }
    return static_cast<int64_t>(id.version());
  }
  return InvalidArgument(source + ": the model imports no opset of the default ONNX domain");
}

Status check_operators(const onnx::GraphProto& graph, const std::string& source) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (is_default_domain(node.domain()) && is_supported_op(node.op_type())) continue;
    std::string op =
        is_default_domain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
    return UnimplementedError(source + ": node '" + node.name() + "' (#" + std::to_string(i) +
                              ", " + op + "): unsupported operator " + op +
                              "; kiln supports: " + supported_ops_list());
  }
  return Status::Ok();
}

std::set<std::string> initializer_names(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::TensorProto& t : graph.initializer()) names.insert(t.name());
  return names;
}

// Turns the graph inputs that `options` binds into initializers holding the given values.
Status bind_inputs(onnx::GraphProto* graph, const ImportOptions& options,
                   const std::string& source) {
  for (const auto& [name, tensor] : options.bound_inputs) {
    std::string where = source + ": bound input '" + name + "'";
    auto* inputs = graph->mutable_input();
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const onnx::ValueInfoProto& v) { return v.name() == name; });
    if (it == inputs->end()) return InvalidArgument(where + " is not an input of the graph");
    const onnx::TypeProto_Tensor& type = it->type().tensor_type();
    if (type.elem_type() != static_cast<int32_t>(tensor.dtype)) {
      return InvalidArgument(where + " is " + dtype_name(tensor.dtype) + ", the input " +
                             dtype_name(static_cast<DType>(type.elem_type())));
    }
    if (tensor.dtype != DType::kFloat32 && tensor.dtype != DType::kInt64) {
      return InvalidArgument(where + ": only float32 and int64 inputs can be bound");
    }
    if (type.has_shape()) {
      bool same_rank = type.shape().dim_size() == static_cast<int>(tensor.shape.size());
      for (int d = 0; same_rank && d < type.shape().dim_size(); ++d) {
        const auto& dim = type.shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() != tensor.shape[d]) same_rank = false;
      }
      if (!same_rank) {
        return InvalidArgument(where + ": shape " + dims_text(tensor.shape) +
                               " does not fit the input's");
      }
    }
    int64_t count = tensor.num_elements();
    if ((tensor.dtype == DType::kFloat32 ? tensor.f32.size() : tensor.i64.size()) !=
        static_cast<size_t>(count)) {
      return InvalidArgument(where + ": " + std::to_string(count) + " values expected");
    }
    onnx::TensorProto* init = graph->add_initializer();
    init->set_name(name);
    init->set_data_type(static_cast<int32_t>(tensor.dtype));
    for (int64_t d : tensor.shape) init->add_dims(d);
    for (float v : tensor.f32) init->add_float_data(v);
    for (int64_t v : tensor.i64) init->add_int64_data(v);
    inputs->erase(it);
  }
  return Status::Ok();
}

// Gives every graph input a static shape: its own, or the one `options` gives where the model
// leaves a dimension symbolic.
Status fix_input_shapes(onnx::GraphProto* graph, const ImportOptions& options,
                        const std::string& source) {
  std::set<std::string> initializers = initializer_names(*graph);
  std::set<std::string> used;
  std::string input_names;
  for (onnx::ValueInfoProto& input : *graph->mutable_input()) {
    if (initializers.count(input.name())) continue;
    input_names += (input_names.empty() ? "'" : ", '") + input.name() + "'";
    std::string where = source + ": input '" + input.name() + "'";
    if (!input.type().has_tensor_type()) return InvalidArgument(where + " is not a tensor");
    onnx::TypeProto_Tensor* type = input.mutable_type()->mutable_tensor_type();
    auto given = options.input_shapes.find(input.name());
    if (given == options.input_shapes.end()) {
      if (!type->has_shape()) {
        return InvalidArgument(where + " has no shape; give it with --input-shape " + input.name() +
                               "=DIMS");
      }
      for (int d = 0; d < type->shape().dim_size(); ++d) {
        const auto& dim = type->shape().dim(d);
        if (dim.has_dim_value()) continue;
        std::string symbol = dim.has_dim_param() ? " '" + dim.dim_param() + "'" : "";
        return InvalidArgument(where + " has a symbolic dimension" + symbol + " at axis " +
                               std::to_string(d) + "; give its shape with --input-shape " +
                               input.name() + "=DIMS (e.g. the batch size 1)");
      }
      continue;
    }
    used.insert(input.name());
    const std::vector<int64_t>& dims = given->second;
    if (type->has_shape()) {
      if (type->shape().dim_size() != static_cast<int>(dims.size())) {
        return InvalidArgument(where + " has rank " + std::to_string(type->shape().dim_size()) +
                               ", the shape given for it (" + dims_text(dims) + ") rank " +
                               std::to_string(dims.size()));
      }
      for (int d = 0; d < type->shape().dim_size(); ++d) {
        const auto& dim = type->shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() != dims[d]) {
          return InvalidArgument(where + " has size " + std::to_string(dim.dim_value()) +
                                 " at axis " + std::to_string(d) + ", the shape given for it (" +
                                 dims_text(dims) + ") " + std::to_string(dims[d]));
        }
      }
    }
    type->mutable_shape()->clear_dim();
    for (int64_t d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  for (const auto& [name, dims] : options.input_shapes) {
    if (!used.count(name)) {
      return InvalidArgument(source + ": a shape is given for '" + name +
                             "', which is not an input of the model (its inputs: " + input_names +
                             ")");
    }
  }
  return Status::Ok();
}

Status infer_shapes(onnx::ModelProto* model, const std::string& source) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/true, /*strict_mode_val=*/1,
                                        /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return InvalidArgument(source + ": ONNX shape inference failed: " + one_line(e.what()));
  }
  return Status::Ok();
}

// Runs ONNX's checker. The checker requires graph inputs and outputs to declare a shape, which
// many producers leave to shape inference for outputs; kiln infers them, so an output without one
// is checked as if it declared an unknown shape (the mark is removed again afterwards).
Status check_model(onnx::ModelProto* model, const std::string& source) {
  std::vector<onnx::TypeProto_Tensor*> marked;
  for (onnx::ValueInfoProto& v : *model->mutable_graph()->mutable_output()) {
    if (!v.type().has_tensor_type() || v.type().tensor_type().has_shape()) continue;
    onnx::TypeProto_Tensor* t = v.mutable_type()->mutable_tensor_type();
    t->mutable_shape();
    marked.push_back(t);
  }
  Status status;
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    status =
        InvalidArgument(source + ": the ONNX checker rejects the model: " + one_line(e.what()));
  }
  for (onnx::TypeProto_Tensor* t : marked) t->clear_shape();
  return status;
}

// The Graph of a folded, shape-inferred model; checks that every tensor a node reads or writes
// has a static shape and that data tensors are float32.
Result<Graph> build_graph(const onnx::ModelProto& model, int64_t opset,
                          const std::vector<int>& node_index, const std::string& source) {
  const onnx::GraphProto& g = model.graph();
  Graph graph;
  graph.source = source;
  graph.opset = opset;

  std::set<std::string> referenced;
  for (const auto& node : g.node()) {
    referenced.insert(node.input().begin(), node.input().end());
  }
  for (const auto& v : g.output()) referenced.insert(v.name());

  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : g.initializer()) {
    initializers.insert(t.name());
    if (!referenced.count(t.name())) continue;
    KILN_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_proto(t, /*with_data=*/true, source));
    graph.tensors[t.name()] = std::move(tensor);
  }
  // Value types, graph inputs first: inference fills value_info and the outputs.
  auto add_value = [&](const onnx::ValueInfoProto& v) {
    if (graph.tensors.count(v.name())) return;
    std::optional<std::vector<int64_t>> shape = static_shape(v.type());
    if (!shape) return;
    Tensor t;
    t.name = v.name();
    t.dtype = static_cast<DType>(v.type().tensor_type().elem_type());
    t.shape = *shape;
    graph.tensors[v.name()] = std::move(t);
  };
  for (const auto& v : g.input()) {
    if (initializers.count(v.name())) continue;
    graph.inputs.push_back(v.name());
    add_value(v);
  }
  for (const auto& v : g.value_info()) add_value(v);
  for (const auto& v : g.output()) add_value(v);
  for (const auto& v : g.output()) graph.outputs.push_back(v.name());

  for (int k = 0; k < g.node_size(); ++k) {
    KILN_ASSIGN_OR_RETURN(Node node, node_from_proto(g.node(k), node_index[k], source));
    std::string where = source + ": " + node.describe();
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const std::string& name = node.outputs[i];
      if (name.empty()) continue;
      auto it = graph.tensors.find(name);
      if (it == graph.tensors.end()) {
        return UnimplementedError(where + ": the shape of its output '" + name +
                                  "' cannot be inferred statically (kiln needs static shapes)");
      }
      if (!is_parameter_output(node.op_type, i) && it->second.dtype != DType::kFloat32) {
        return UnimplementedError(where + ": output '" + name + "' is " +
                                  dtype_name(it->second.dtype) + "; kiln computes in float32 only");
      }
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& name = node.inputs[i];
      if (name.empty()) continue;
      auto it = graph.tensors.find(name);
      if (it == graph.tensors.end()) {
        return UnimplementedError(where + ": the shape of its input '" + name +
                                  "' cannot be inferred statically (kiln needs static shapes)");
      }
      if (!is_parameter_input(node.op_type, i) && it->second.dtype != DType::kFloat32) {
        return UnimplementedError(where + ": input '" + name + "' is " +
                                  dtype_name(it->second.dtype) + "; kiln computes in float32 only");
      }
    }
    graph.nodes.push_back(std::move(node));
  }
  for (const std::string& name : graph.outputs) {
    if (!graph.tensors.count(name)) {
      return UnimplementedError(source + ": the shape of graph output '" + name +
                                "' cannot be inferred statically");
    }
  }
  return graph;
}

}  // namespace

Result<Graph> import_onnx(const std::string& path, const ImportOptions& options) {
  KILN_ASSIGN_OR_RETURN(onnx::ModelProto model, parse_model(path));
  KILN_RETURN_IF_ERROR(upgrade_old_opset(&model, path));
  KILN_ASSIGN_OR_RETURN(int64_t opset, default_opset(model, path));
  KILN_RETURN_IF_ERROR(check_model(&model, path));
  KILN_RETURN_IF_ERROR(check_operators(model.graph(), path));
  KILN_RETURN_IF_ERROR(check_graph_structure(model.graph(), path));
  KILN_RETURN_IF_ERROR(check_window_attributes(model.graph(), path));
  KILN_RETURN_IF_ERROR(bind_inputs(model.mutable_graph(), options, path));
  KILN_RETURN_IF_ERROR(fix_input_shapes(model.mutable_graph(), options, path));

  std::vector<int> node_index(model.graph().node_size());
  for (size_t i = 0; i < node_index.size(); ++i) node_index[i] = static_cast<int>(i);
  // Each fold can make more shapes inferable (a Reshape whose shape input became constant),
  // which can make more nodes foldable; every round removes a node, so this ends.
  while (true) {
    KILN_RETURN_IF_ERROR(infer_shapes(&model, path));
    KILN_ASSIGN_OR_RETURN(int folded, fold_constants(&model, opset, &node_index, path));
    if (folded == 0) break;
  }
  KILN_ASSIGN_OR_RETURN(Graph graph, build_graph(model, opset, node_index, path));
  KILN_RETURN_IF_ERROR(check_operands(graph));
  return graph;
}

Result<std::pair<std::string, std::vector<int64_t>>> parse_input_shape(std::string_view text) {
  std::string where = "input shape '" + std::string(text) + "'";
  size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument(where + ": expected NAME=DIMS, e.g. input=1x3x224x224");
  }
  std::string name(text.substr(0, eq));
  std::vector<int64_t> dims;
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    size_t x = rest.find('x');
    std::string_view part = rest.substr(0, x);
    int64_t d = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (ec != std::errc() || end != part.data() + part.size() || d < 1 || d > (int64_t{1} << 31)) {
      return InvalidArgument(where + ": '" + std::string(part) +
                             "' is not a dimension (a positive integer)");
    }
    dims.push_back(d);
    if (x == std::string_view::npos) break;
    rest = rest.substr(x + 1);
  }
  return std::make_pair(name, dims);
}

}  // namespace kiln::frontend
