// What kiln's dense templates share (dense_nopack.x86, dense_pack.x86, dense_pack_ragged.x86):
// the operator's workload keys, tensors, FLOPs, reference and TVM arguments (DenseBase), the
// kernels' argument buffers, and the untimed weight packing of the packed templates.
//
// dense: C[M,N] = A[M,K] * W[N,K]^T (+ bias[N]).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "ops/packed_matmul.h"
#include "ops/template.h"

namespace kiln::ops {

struct DenseShape {
  int64_t m, n, k;
  bool bias;
};

class DenseBase : public Template {
 public:
  std::string_view op() const override { return "dense"; }
  // M, N and K (each >= 1, within ops/limits.h) and bias (0 or 1, default 0).
  Result<Workload> normalize(const Workload& w) const override;
  std::vector<TensorSpec> inputs(const Workload& w) const override;
  std::vector<TensorSpec> outputs(const Workload& w) const override;
  double flop(const Workload& w) const override;
  void reference(const Workload& w, const std::vector<const float*>& in,
                 const std::vector<float*>& out) const override;
  // TVM's dense tasks take (data, weight, None, out_dtype): the bias add is a separate op there,
  // so a kernel with kiln's fused bias is the same TVM task as one without.
  nlohmann::json tvm_args(const Workload& w) const override;

 protected:
  static DenseShape shape(const Workload& w);

  // The program's argument buffers, in kernel argument order.
  struct Args {
    ir::Buffer a, w, bias, c;
    std::vector<ir::Buffer> list() const;
  };
  static Args make_args(const DenseShape& s);

  // The packed weight Wp[N/bn][K][bn] of the packed templates (REQUIRES N % bn == 0), and the
  // untimed stage that fills it: Wp[xb, k, j] = W[xb*bn + j, k].
  static ir::Buffer packed_weight(const DenseShape& s, int64_t bn);
  static ir::Stmt pack_weight(const Args& args, const ir::Buffer& wp, const DenseShape& s,
                              int64_t bn);
  // Sets `tile`'s operands and result for the output rows from `row0` and Wp's column block `xb`
  // (of wp's bn lanes): A's rows, Wp's vectors, and C (plus the bias) written. REQUIRES
  // tile->k_inner set.
  static void bind_packed_tile(PackedMatmulTile* tile, const Args& args, const ir::Buffer& wp,
                               const DenseShape& s, const ir::Expr& row0, const ir::Expr& xb);
  // A packed template's program: the untimed stage `pack` (pack_weight), then `compute`.
  ir::Program packed_program(const Args& args, const ir::Buffer& wp, ir::Stmt pack,
                             ir::Stmt compute) const;
};

}  // namespace kiln::ops
