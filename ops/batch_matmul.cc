// batch_matmul in TVM's NT convention: out[b, M, N] = X[b, M, K] * Y[b, N, K]^T, as the x86
// task batch_matmul.x86 (topi/x86/batch_matmul.py at v0.16).
//
// The config space is TVM's: tile_y = split(M, 2), tile_x = split(N, 2), tile_k = split(K, 2),
// with its fallback. The schedule is not TVM's rfactor over k but a register-blocked one like
// dense_pack.x86: Y is packed to Yp[b][N/bn][K][bn] (bn = tile_x[-1]) and each (b, yo, xo) tile
// keeps CC[tile_y[-1]][bn] in registers, a broadcast of X times a vector of Yp per k. Y is an
// activation in general (attention), so unlike dense_pack's weight packing this stage is timed.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ops/limits.h"
#include "ops/matmul_node.h"
#include "ops/matmul_splits.h"
#include "ops/packed_matmul.h"
#include "ops/registry.h"
#include "ops/schedule_util.h"

namespace kiln::ops {
namespace {

using ir::Buffer;
using ir::BufferScope;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

constexpr std::string_view kName = "batch_matmul.x86";

struct Shape {
  int64_t b, m, n, k;
};

Shape shape_of(const Workload& w) { return {w.at("B"), w.at("M"), w.at("N"), w.at("K")}; }

// The largest power of two dividing n and at most max_value (TVM's get_max_power2_factor).
int64_t max_power2_factor(int64_t n, int64_t max_value) {
  int64_t x = 1;
  while (n % 2 == 0 && x * 2 <= max_value) {
    x *= 2;
    n /= 2;
  }
  return x;
}

class BatchMatmul final : public Template {
 public:
  std::string_view name() const override { return kName; }
  std::string_view op() const override { return "batch_matmul"; }

  Result<Workload> normalize(const Workload& w) const override {
    std::string where = std::string(kName) + " workload " + w.to_string() + ": ";
    if (w.op != op()) return InvalidArgument(where + "operator is not batch_matmul");
    KILN_ASSIGN_OR_RETURN(Workload out, normalize_params(w, kName,
                                                         {{"B", std::nullopt, 1},
                                                          {"M", std::nullopt, 1},
                                                          {"N", std::nullopt, 1},
                                                          {"K", std::nullopt, 1}}));
    Shape s = shape_of(out);
    if (s.b > kMaxDim || s.m > kMaxDim || s.n > kMaxDim || s.k > kMaxDim ||
        s.b * std::max({s.m * s.k, s.n * s.k, s.m * s.n}) > kMaxTensorElements) {
      return InvalidArgument(where + kShapeLimitsText);
    }
    return out;
  }

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    Shape s = shape_of(w);
    return {{"x", {s.b, s.m, s.k}}, {"y", {s.b, s.n, s.k}}};
  }

  std::vector<TensorSpec> outputs(const Workload& w) const override {
    Shape s = shape_of(w);
    return {{"output", {s.b, s.m, s.n}}};
  }

  double flop(const Workload& w) const override {
    Shape s = shape_of(w);
    return 2.0 * static_cast<double>(s.b) * static_cast<double>(s.m) * static_cast<double>(s.n) *
           static_cast<double>(s.k);
  }

  ConfigSpace space(const Workload& w) const override {
    Shape s = shape_of(w);
    ConfigSpace space;
    define_matmul_splits(&space, s.m, s.n, s.k, 2);
    return space;
  }

  // TVM: tile_k = [K // 16, 16], tile_x/tile_y inner = the largest power of two <= 8 dividing
  // N/M. TVM's tile_k leaves a tail when 16 does not divide K; here it is the largest divisor
  // of K that is <= 16 (the same when 16 divides K), so the fallback is a config of the space.
  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo&) const override {
    Shape s = shape_of(w);
    int64_t x_bn = max_power2_factor(s.n, 8), y_bn = max_power2_factor(s.m, 8);
    auto config = space.make_config({{"tile_y", SplitEntity{{s.m / y_bn, y_bn}}},
                                     {"tile_x", SplitEntity{{s.n / x_bn, x_bn}}},
                                     {"tile_k", fallback_split(s.k, {-1, 16})}});
    // The sizes above always divide: a failure is a bug of this template, which value() reports.
    return std::move(config).value();
  }

  // kiln's default (ops/default_config.h): the CC tile for the target's registers.
  ConfigEntity default_config(const Workload& w, const ConfigSpace& space,
                              const TargetInfo& target) const override {
    Shape s = shape_of(w);
    DefaultMatmulTile t = default_matmul_tile(s.m, s.n, s.k, target);
    auto config = space.make_config({{"tile_y", SplitEntity{{s.m / t.rows, t.rows}}},
                                     {"tile_x", SplitEntity{{s.n / t.lanes, t.lanes}}},
                                     {"tile_k", SplitEntity{{s.k / t.k_inner, t.k_inner}}}});
    return std::move(config).value();  // divisors of each axis: a failure is a bug
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target,
                                  const ActivationLayout& layout = {}) const override {
    KILN_RETURN_IF_ERROR(default_layout_only(name(), layout));
    Shape s = shape_of(w);
    KILN_ASSIGN_OR_RETURN(MatmulSplits t, matmul_splits(kName, config, s.m, s.n, s.k, 2));
    const int64_t yo_n = t.y[0], ty = t.y[1], xo_n = t.x[0], bn = t.x[1];
    const int64_t ko_n = t.k[0], kt = t.k[1];

    Buffer x_buf("X", {s.b, s.m, s.k}, BufferScope::kArgument);
    Buffer y_buf("Y", {s.b, s.n, s.k}, BufferScope::kArgument);
    Buffer out("C", {s.b, s.m, s.n}, BufferScope::kArgument);
    Buffer yp("Yp", {s.b, s.n / bn, s.k, bn}, BufferScope::kWorkspace);

    // Yp[b, xb, k, j] = Y[b, xb*bn + j, k], parallel over (b, xb).
    Expr pf = ir::var("b.xb"), pb = pf / xo_n, pxb = pf % xo_n;
    Expr pj = ir::var("j"), pk = ir::var("k");
    Stmt pack = ir::For(
        pf, s.b * xo_n, LoopKind::kParallel,
        ir::For(pj, bn, LoopKind::kSerial,
                ir::For(pk, s.k, LoopKind::kSerial,
                        ir::Store(yp, {pb, pxb, pk, pj}, y_buf.load({pb, pxb * bn + pj, pk})))));

    // TVM: fuse(b, yo, xo) -> parallel, CC computed there.
    Expr f = ir::var("b.yo.xo"), b = f / (yo_n * xo_n), yo = f / xo_n % yo_n, xo = f % xo_n;
    PackedMatmulTile tile;
    tile.rows = ty;
    tile.lanes = bn;
    tile.k_outer = ko_n;
    tile.k_inner = kt;
    tile.row_block = ty;
    tile.a = [&](const Expr& y, const Expr& k_o, const Expr& k_i) {
      return x_buf.load({b, yo * ty + y, k_o * Expr(kt) + k_i});
    };
    tile.b = [&](const Expr& k_o, const Expr& k_i, const Expr& x) {
      return yp.load({b, xo, k_o * Expr(kt) + k_i, x});
    };
    tile.write = [&](const Expr& y, const Expr& x, const Expr& value) {
      return ir::Store(out, {b, yo * ty + y, xo * bn + x}, value);
    };
    Stmt compute =
        ir::For(f, s.b * yo_n * xo_n, LoopKind::kParallel, packed_matmul_tile(tile, target));

    ir::Program program;
    program.name = std::string(kName);
    program.buffers = {x_buf, y_buf, out, yp};
    program.num_inputs = 2;
    program.num_outputs = 1;
    program.stages = {{"batch_matmul_pack_y", pack, true}, {"batch_matmul_compute", compute, true}};
    return program;
  }

  void reference(const Workload& w, const std::vector<const float*>& in,
                 const std::vector<float*>& outs) const override {
    Shape s = shape_of(w);
    for (int64_t b = 0; b < s.b; ++b) {
      const float* x = in[0] + b * s.m * s.k;
      const float* y = in[1] + b * s.n * s.k;
      float* o = outs[0] + b * s.m * s.n;
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < s.k; ++k)
            acc += static_cast<double>(x[i * s.k + k]) * y[j * s.k + k];
          o[i * s.n + j] = static_cast<float>(acc);
        }
      }
    }
  }

  // TVM 0.16's x86 strategy calls batch_matmul(x, y, out_type.shape, out_dtype, transpose_a,
  // transpose_b), so the workload holds the output shape, not None.
  nlohmann::json tvm_args(const Workload& w) const override {
    Shape s = shape_of(w);
    return {{"TENSOR", {s.b, s.m, s.k}, "float32"},
            {"TENSOR", {s.b, s.n, s.k}, "float32"},
            {s.b, s.m, s.n},
            "float32",
            false,
            true};
  }
};

// The operator: Gemm and MatMul nodes that are not dense (two activations, or a batched
// weight), B = the broadcast batch size.
class BatchMatmulOperator final : public Operator {
 public:
  std::string_view name() const override { return "batch_matmul"; }
  std::vector<std::string> onnx_ops() const override { return {"Gemm", "MatMul"}; }

  Result<std::optional<Workload>> workload_of(const NodeView& node) const override {
    KILN_ASSIGN_OR_RETURN(MatmulOperands m, matmul_operands(node));
    if (m.constant_matrix_b) return std::optional<Workload>();  // dense's
    // Batch dimensions broadcast as numpy does.
    std::vector<int64_t> batch_a(m.a.begin(), m.a.end() - 2), batch_b(m.b.begin(), m.b.end() - 2);
    size_t rank = std::max(batch_a.size(), batch_b.size());
    batch_a.insert(batch_a.begin(), rank - batch_a.size(), 1);
    batch_b.insert(batch_b.begin(), rank - batch_b.size(), 1);
    int64_t batch = 1;
    for (size_t i = 0; i < rank; ++i) {
      if (batch_a[i] != batch_b[i] && batch_a[i] != 1 && batch_b[i] != 1) {
        return node.not_expressible("batch dimensions do not broadcast");
      }
      batch *= std::max(batch_a[i], batch_b[i]);
    }
    Workload out;
    out.op = "batch_matmul";
    out.params = {{"B", batch}, {"M", m.a[m.a.size() - 2]}, {"N", m.n}, {"K", m.k}};
    return std::optional(out);
  }

  Result<Workload> from_tvm_args(const nlohmann::json& args) const override {
    return matmul_from_tvm_args(std::string(name()), args, /*batched=*/true);
  }

  Result<Binding> bind(const NodeView& node, const Workload&,
                       ArgumentBinder& binder) const override {
    GemmTerms t = gemm_terms(node);
    const std::vector<int64_t>& out_shape = node.shape(node.outputs()[0]);
    std::vector<int64_t> batch(out_shape.begin(),
                               out_shape.end() - std::min<size_t>(2, out_shape.size()));
    if (batch.empty()) batch = {1};
    KILN_ASSIGN_OR_RETURN(int a, binder.operand(node.inputs()[0], batch, t.trans_a));
    KILN_ASSIGN_OR_RETURN(int b, binder.operand(node.inputs()[1], batch, !t.trans_b));
    return gemm_binding(t, {a, b}, /*c_is_bias=*/false);
  }
};

}  // namespace

const Operator& batch_matmul_operator() {
  static const BatchMatmulOperator instance;
  return instance;
}

const Template& batch_matmul_template() {
  static const BatchMatmul instance;
  return instance;
}

}  // namespace kiln::ops
