// What dense and batch_matmul share of ONNX's MatMul (numpy semantics) and Gemm (2-D, with
// transposes, alpha, beta and C) nodes: the operand shapes their workloads are read from, and
// Gemm's terms that a compiled model applies around the product.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ops/node_view.h"
#include "ops/operator.h"
#include "ops/workload.h"

namespace kiln::ops {

// Gemm's attributes (MatMul: no transposes, alpha = beta = 1, no C).
struct GemmTerms {
  bool gemm = false;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  std::string c;  // C, "" when absent or beta is 0
};
GemmTerms gemm_terms(const NodeView& node);

// The operands' shapes after Gemm's transA and numpy's vector promotion (A [K] -> [1, K],
// B [K] -> [K, 1]), the reduction length and the output columns.
struct MatmulOperands {
  GemmTerms terms;
  std::vector<int64_t> a, b;
  int64_t k = 0, n = 0;
  bool constant_matrix_b = false;  // B a constant of rank <= 2: a dense workload
};
// An error for a scalar operand.
Result<MatmulOperands> matmul_operands(const NodeView& node);

// TVM args of dense ([data [M, K], weight [N, K], null, dtype]: the task, no bias) or, `batched`,
// batch_matmul ([x [B, M, K], y [B, N, K], ...]) -> the workload's parameters.
Result<Workload> matmul_from_tvm_args(std::string op, const nlohmann::json& args, bool batched);

// A Binding of `args` with Gemm's alpha and beta * C (C left out when `c_is_bias`: the template
// adds it).
Binding gemm_binding(const GemmTerms& terms, std::vector<int> args, bool c_is_bias);

}  // namespace kiln::ops
