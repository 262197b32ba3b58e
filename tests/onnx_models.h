// Small ONNX models built in code for the frontend tests (bad inputs, constant folding,
// operator mappings), written to a temporary file for import_onnx or the `kiln` binary.
#pragma once

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kiln::testing {

class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset = 13) {
    proto_.set_ir_version(8);
    proto_.set_producer_name("kiln tests");
    onnx::OperatorSetIdProto* id = proto_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
    proto_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& proto() { return proto_; }
  onnx::GraphProto* graph() { return proto_.mutable_graph(); }

  // A graph input; a dimension of -1 is the symbolic dimension "N".
  void input(const std::string& name, const std::vector<int64_t>& dims,
             int32_t dtype = onnx::TensorProto::FLOAT) {
    value(graph()->add_input(), name, dims, dtype);
  }
  // A graph output with its element type and no shape (shape inference fills it).
  void output(const std::string& name, int32_t dtype = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto* v = graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
  }

  // A float32 initializer filled with `fill`.
  void weight(const std::string& name, const std::vector<int64_t>& dims, float fill = 0.5f) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(fill);
  }
  // A float32 initializer holding `values`; `dims` empty for a scalar.
  void floats(const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& values) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  // An int64 initializer; `dims` empty for a scalar.
  void ints(const std::string& name, const std::vector<int64_t>& dims,
            const std::vector<int64_t>& values) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    onnx::NodeProto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph()->node_size() - 1) : name);
    for (const std::string& i : inputs) n->add_input(i);
    for (const std::string& o : outputs) n->add_output(o);
    return n;
  }

  static void attr(onnx::NodeProto* n, const std::string& key, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, const std::vector<int64_t>& v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, float v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, const std::string& v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  // Writes the model to a fresh file in the temporary directory and returns its path.
  std::string write(const std::string& stem) const {
    std::string path = temp_path(stem + ".onnx");
    std::ofstream out(path, std::ios::binary);
    proto_.SerializeToOstream(&out);
    return path;
  }

  // A path in this test process's own temporary directory, removed when the process exits.
  static std::string temp_path(const std::string& file) {
    return (scratch_dir().path / file).string();
  }

 private:
  struct ScratchDir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("kiln_frontend_test_" + std::to_string(getpid()));
    ScratchDir() { std::filesystem::create_directories(path); }
    ~ScratchDir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static ScratchDir& scratch_dir() {
    static ScratchDir dir;
    return dir;
  }

  static void value(onnx::ValueInfoProto* v, const std::string& name,
                    const std::vector<int64_t>& dims, int32_t dtype) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(dtype);
    onnx::TensorShapeProto* shape = t->mutable_shape();
    for (int64_t d : dims) {
      if (d < 0) {
        shape->add_dim()->set_dim_param("N");
      } else {
        shape->add_dim()->set_dim_value(d);
      }
    }
  }

  onnx::ModelProto proto_;
};

}  // namespace kiln::testing
