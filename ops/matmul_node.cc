#include "ops/matmul_node.h"

#include <utility>

#include "ops/tvm_args_parse.h"

namespace kiln::ops {

GemmTerms gemm_terms(const NodeView& node) {
  GemmTerms t;
  t.gemm = node.op_type() == "Gemm";
  if (!t.gemm) return t;
  t.trans_a = node.attr_int("transA", 0) != 0;
  t.trans_b = node.attr_int("transB", 0) != 0;
  t.alpha = node.attr_float("alpha", 1.0f);
  t.beta = node.attr_float("beta", 1.0f);
  if (node.inputs().size() > 2 && t.beta != 0.0f) t.c = node.inputs()[2];
  return t;
}

Result<MatmulOperands> matmul_operands(const NodeView& node) {
  MatmulOperands m;
  m.terms = gemm_terms(node);
  m.a = node.shape(node.inputs()[0]);
  m.b = node.shape(node.inputs()[1]);
  if (m.a.empty() || m.b.empty()) return node.not_expressible("a scalar operand");
  if (m.terms.trans_a) std::swap(m.a[0], m.a[1]);
  if (m.a.size() == 1) m.a.insert(m.a.begin(), 1);
  if (m.b.size() == 1) m.b.push_back(1);
  m.k = m.a.back();
  m.n = m.terms.trans_b ? m.b[m.b.size() - 2] : m.b.back();
  m.constant_matrix_b = node.is_constant(node.inputs()[1]) && m.b.size() == 2;
  return m;
}

Result<Workload> matmul_from_tvm_args(std::string op, const nlohmann::json& args, bool batched) {
  Workload w;
  w.op = std::move(op);
  size_t rank = batched ? 3 : 2;
  if (args.size() < 2) return InvalidArgument("too few args");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> a, tvm_tensor_dims(args[0], rank, "data"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> b, tvm_tensor_dims(args[1], rank, "weight"));
  if (batched) w.params["B"] = a[0];
  w.params["M"] = a[rank - 2];
  w.params["K"] = a[rank - 1];
  w.params["N"] = b[rank - 2];
  return w;
}

Binding gemm_binding(const GemmTerms& terms, std::vector<int> args, bool c_is_bias) {
  Binding b;
  b.args = std::move(args);
  b.scale = terms.alpha;
  if (!c_is_bias) b.addend = terms.c;
  b.addend_scale = terms.beta;
  return b;
}

}  // namespace kiln::ops
