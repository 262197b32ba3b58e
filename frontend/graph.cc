#include "frontend/graph.h"

#include "common/check.h"

namespace kiln::frontend {

std::string dtype_name(DType t) {
  switch (t) {
    case DType::kUndefined:
      return "undefined";
    case DType::kFloat32:
      return "float32";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
    case DType::kFloat16:
      return "float16";
    case DType::kFloat64:
      return "float64";
  }
  return "dtype " + std::to_string(static_cast<int32_t>(t));
}

int64_t Tensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string Node::describe() const {
  return "node '" + name + "' (#" + std::to_string(index) + ", " + op_type + ")";
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return *v;
  return fallback;
}

float Node::attr_float(const std::string& key, float fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (const float* v = std::get_if<float>(&it->second)) return *v;
  return fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (const std::string* v = std::get_if<std::string>(&it->second)) return *v;
  return fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key,
                                     const std::vector<int64_t>& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  return fallback;
}

const Tensor& Graph::tensor(const std::string& name) const {
  auto it = tensors.find(name);
  KILN_CHECK(it != tensors.end()) << source << ": no tensor '" << name << "' in the graph";
  return it->second;
}

bool Graph::is_constant(const std::string& name) const {
  auto it = tensors.find(name);
  return it != tensors.end() && it->second.is_constant;
}

}  // namespace kiln::frontend
