#include "frontend/supported_ops.h"

#include <algorithm>
#include <map>
#include <set>

#include "ops/registry.h"

namespace kiln::frontend {

const std::vector<std::string>& supported_ops() {
  static const std::vector<std::string> kOps = [] {
    // The tunable nodes' op types come from the operators that map them (ops/operator.h).
    std::vector<std::string> ops = {"BatchNormalization",
                                    "Relu",
                                    "LeakyRelu",
                                    "Clip",
                                    "Sigmoid",
                                    "HardSigmoid",
                                    "HardSwish",
                                    "Tanh",
                                    "Erf",
                                    "Exp",
                                    "Sqrt",
                                    "Pow",
                                    "Abs",
                                    "Neg",
                                    "Reciprocal",
                                    "Add",
                                    "Sub",
                                    "Mul",
                                    "Div",
                                    "Max",
                                    "Min",
                                    "MaxPool",
                                    "AveragePool",
                                    "GlobalAveragePool",
                                    "ReduceMean",
                                    "ReduceSum",
                                    "Softmax",
                                    "LayerNormalization",
                                    "Flatten",
                                    "Reshape",
                                    "Transpose",
                                    "Concat",
                                    "Split",
                                    "Slice",
                                    "Squeeze",
                                    "Unsqueeze",
                                    "Gather",
                                    "Shape",
                                    "Pad",
                                    "Identity",
                                    "Dropout",
                                    "Constant"};
    for (const ops::Operator* op : ops::all_operators()) {
      for (const std::string& type : op->onnx_ops()) ops.push_back(type);
    }
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    return ops;
  }();
  return kOps;
}

bool is_supported_op(const std::string& op_type) {
  const std::vector<std::string>& ops = supported_ops();
  return std::binary_search(ops.begin(), ops.end(), op_type);
}

std::string supported_ops_list() {
  std::string list;
  for (const std::string& op : supported_ops()) list += (list.empty() ? "" : ", ") + op;
  return list;
}

bool is_parameter_input(const std::string& op_type, size_t index) {
  // Inputs that hold shapes, axes, indices, pads or split sizes (int64), or Dropout's ratio and
  // training flag; every other input is data.
  static const std::map<std::string, std::set<size_t>> kParameters = {
      {"Reshape", {1}},    {"Gather", {1}},     {"Slice", {1, 2, 3, 4}}, {"Squeeze", {1}},
      {"Unsqueeze", {1}},  {"Split", {1}},      {"Pad", {1, 3}},         {"ReduceSum", {1}},
      {"ReduceMean", {1}}, {"Dropout", {1, 2}}, {"Shape", {0}}};
  auto it = kParameters.find(op_type);
  return it != kParameters.end() && it->second.count(index) > 0;
}

bool is_parameter_output(const std::string& op_type, size_t index) {
  return (op_type == "Dropout" && index == 1) || op_type == "Shape";
}

}  // namespace kiln::frontend
