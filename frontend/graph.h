// The model graph kiln works on: what frontend/onnx_import.h makes of an ONNX file. Every tensor
// has a static shape (batch size fixed at load) and an element type; constants (initializers,
// Constant nodes and folded shape arithmetic) carry their data. Nodes keep their ONNX op type,
// attributes and their index in the file's node list, so messages point at what a user sees in
// the file. Knows nothing of ONNX's C++ library: the importer converts at the edge.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "ops/node_view.h"

namespace kiln::frontend {

// Element types, numbered as ONNX's TensorProto.DataType (so unknown ones keep their number).
enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
};
// "float32", "int64", ... ("dtype 13" for one without a name here).
std::string dtype_name(DType t);

// "1x3x224x224" ("scalar" for no dimensions): how messages write a shape.
using ops::dims_text;

struct Tensor {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;  // static; empty for a scalar
  // Constants only: the data, row-major, in the vector matching dtype (float32 -> f32,
  // int64 -> i64). A constant of another dtype keeps only its shape and dtype.
  bool is_constant = false;
  std::vector<float> f32;
  std::vector<int64_t> i64;

  int64_t num_elements() const;
};

// An attribute value: int, float, string, or a list of ints or floats (the kinds the supported
// operators use; a graph attribute or tensor attribute is rejected at import).
using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;

struct Node {
  std::string op_type;              // ONNX op type, e.g. "Conv"
  std::string name;                 // the node's name in the file (may be empty)
  int index = 0;                    // position in the file's node list
  std::vector<std::string> inputs;  // tensor names; "" for an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, AttrValue> attrs;

  // "node 'conv1' (#3, Conv)": how messages name a node.
  std::string describe() const;

  // Attribute accessors with a default for an absent attribute.
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key,
                                 const std::vector<int64_t>& fallback) const;
};

struct Graph {
  std::string source;                     // where it came from (the file path), for messages
  int64_t opset = 0;                      // the default domain's opset version
  std::vector<Node> nodes;                // in execution (file) order, folded nodes removed
  std::map<std::string, Tensor> tensors;  // every tensor a node or the graph reads or writes
  std::vector<std::string> inputs;        // graph inputs that are not initializers
  std::vector<std::string> outputs;

  // REQUIRES: `name` is a tensor of the graph (checked).
  const Tensor& tensor(const std::string& name) const;
  bool is_constant(const std::string& name) const;
};

}  // namespace kiln::frontend
