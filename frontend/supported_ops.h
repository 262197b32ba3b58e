// The ONNX operators kiln's importer accepts (default domain, opsets 11-17), and which of their
// inputs and outputs are parameters (shapes, axes, indices, masks: any dtype) rather than data
// (float32, the only dtype kiln computes in).
#pragma once

#include <string>
#include <vector>

namespace kiln::frontend {

inline constexpr int64_t kMinOpset = 11;
inline constexpr int64_t kMaxOpset = 17;

// Sorted op types: the importer's own and those the registered operators map
// (ops/registry.h). REQUIRES: called after static initialization.
const std::vector<std::string>& supported_ops();
bool is_supported_op(const std::string& op_type);
// "Abs, Add, AveragePool, ..." for messages.
std::string supported_ops_list();

// Whether input (output) `index` of `op_type` is a parameter, e.g. Reshape's shape (input 1),
// Gather's indices (input 1), Dropout's mask (output 1).
bool is_parameter_input(const std::string& op_type, size_t index);
bool is_parameter_output(const std::string& op_type, size_t index);

}  // namespace kiln::frontend
