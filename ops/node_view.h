// A graph node as an operator's ONNX mapping sees it (ops/operator.h): its op type, attributes
// and tensors (names, static shapes, constness). ops sits below the frontend, so the view is an
// interface here that the frontend implements over its Graph (frontend/workload_mapping.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::ops {

class NodeView {
 public:
  virtual ~NodeView() = default;

  virtual const std::string& op_type() const = 0;  // ONNX op type, e.g. "Conv"
  // How a message about the node begins, e.g. "model.onnx: node 'conv1' (#3, Conv)".
  virtual std::string where() const = 0;

  virtual const std::vector<std::string>& inputs() const = 0;  // "" for an omitted optional one
  virtual const std::vector<std::string>& outputs() const = 0;
  // REQUIRES: `tensor` is one of the node's inputs or outputs.
  virtual const std::vector<int64_t>& shape(const std::string& tensor) const = 0;
  virtual bool is_constant(const std::string& tensor) const = 0;

  // Attribute accessors with a default for an absent attribute.
  virtual int64_t attr_int(const std::string& key, int64_t fallback) const = 0;
  virtual float attr_float(const std::string& key, float fallback) const = 0;
  virtual std::string attr_string(const std::string& key, const std::string& fallback) const = 0;
  virtual std::vector<int64_t> attr_ints(const std::string& key,
                                         const std::vector<int64_t>& fallback) const = 0;

  // InvalidArgument "<where>: <why>", for a node the operator's workloads cannot express.
  Status not_expressible(const std::string& why) const;
};

// "1x3x224x224" ("scalar" for no dimensions): how messages write a shape.
std::string dims_text(const std::vector<int64_t>& dims);

}  // namespace kiln::ops
