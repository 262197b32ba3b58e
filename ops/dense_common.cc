#include "ops/dense_common.h"

#include <optional>
#include <string>

#include "ops/limits.h"
#include "ops/schedule_util.h"

namespace kiln::ops {

using ir::Buffer;
using ir::BufferScope;
using ir::Expr;
using ir::LoopKind;

Result<Workload> DenseBase::normalize(const Workload& w) const {
  std::string where = std::string(name()) + " workload " + w.to_string() + ": ";
  if (w.op != op()) return InvalidArgument(where + "operator is not dense");
  KILN_ASSIGN_OR_RETURN(Workload out, normalize_params(w, name(),
                                                       {{"M", std::nullopt, 1},
                                                        {"N", std::nullopt, 1},
                                                        {"K", std::nullopt, 1},
                                                        {"bias", 0, 0}}));
  if (out.at("bias") > 1) return InvalidArgument(where + "bias must be 0 or 1");
  int64_t m = out.at("M"), n = out.at("N"), k = out.at("K");
  if (m > kMaxDim || n > kMaxDim || k > kMaxDim || m * k > kMaxTensorElements ||
      n * k > kMaxTensorElements || m * n > kMaxTensorElements) {
    return InvalidArgument(where + kShapeLimitsText);
  }
  return out;
}

std::vector<TensorSpec> DenseBase::inputs(const Workload& w) const {
  DenseShape s = shape(w);
  std::vector<TensorSpec> out = {{"data", {s.m, s.k}}, {"weight", {s.n, s.k}}};
  if (s.bias) out.push_back({"bias", {s.n}});
  return out;
}

std::vector<TensorSpec> DenseBase::outputs(const Workload& w) const {
  DenseShape s = shape(w);
  return {{"output", {s.m, s.n}}};
}

double DenseBase::flop(const Workload& w) const {
  DenseShape s = shape(w);
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

void DenseBase::reference(const Workload& w, const std::vector<const float*>& in,
                          const std::vector<float*>& out) const {
  DenseShape s = shape(w);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = s.bias ? in[2][j] : 0.0;
      for (int64_t k = 0; k < s.k; ++k) {
        acc += static_cast<double>(in[0][i * s.k + k]) * in[1][j * s.k + k];
      }
      out[0][i * s.n + j] = static_cast<float>(acc);
    }
  }
}

nlohmann::json DenseBase::tvm_args(const Workload& w) const {
  DenseShape s = shape(w);
  return {{"TENSOR", {s.m, s.k}, "float32"}, {"TENSOR", {s.n, s.k}, "float32"}, nullptr, "float32"};
}

DenseShape DenseBase::shape(const Workload& w) {
  auto it = w.params.find("bias");
  return {w.at("M"), w.at("N"), w.at("K"), it != w.params.end() && it->second != 0};
}

std::vector<Buffer> DenseBase::Args::list() const {
  std::vector<Buffer> out = {a, w};
  if (bias.defined()) out.push_back(bias);
  out.push_back(c);
  return out;
}

DenseBase::Args DenseBase::make_args(const DenseShape& s) {
  Args args;
  args.a = Buffer("A", {s.m, s.k}, BufferScope::kArgument);
  args.w = Buffer("W", {s.n, s.k}, BufferScope::kArgument);
  if (s.bias) args.bias = Buffer("bias", {s.n}, BufferScope::kArgument);
  args.c = Buffer("C", {s.m, s.n}, BufferScope::kArgument);
  return args;
}

Buffer DenseBase::packed_weight(const DenseShape& s, int64_t bn) {
  return Buffer("Wp", {s.n / bn, s.k, bn}, BufferScope::kWorkspace);
}

ir::Stmt DenseBase::pack_weight(const Args& args, const Buffer& wp, const DenseShape& s,
                                int64_t bn) {
  Expr pb = ir::var("xb"), pj = ir::var("j"), pk = ir::var("k");
  return ir::For(pb, s.n / bn, LoopKind::kParallel,
                 ir::For(pj, bn, LoopKind::kSerial,
                         ir::For(pk, s.k, LoopKind::kSerial,
                                 ir::Store(wp, {pb, pk, pj}, args.w.load({pb * bn + pj, pk})))));
}

void DenseBase::bind_packed_tile(PackedMatmulTile* tile, const Args& args, const Buffer& wp,
                                 const DenseShape& s, const Expr& row0, const Expr& xb) {
  const int64_t bn = wp->shape.back();
  const Expr k_inner(tile->k_inner);
  tile->a = [=](const Expr& y, const Expr& ko, const Expr& ki) {
    return args.a.load({row0 + y, ko * k_inner + ki});
  };
  tile->b = [=](const Expr& ko, const Expr& ki, const Expr& x) {
    return wp.load({xb, ko * k_inner + ki, x});
  };
  tile->write = [=](const Expr& y, const Expr& x, const Expr& value) {
    Expr col = xb * bn + x;
    return ir::Store(args.c, {row0 + y, col}, s.bias ? value + args.bias.load({col}) : value);
  };
}

ir::Program DenseBase::packed_program(const Args& args, const Buffer& wp, ir::Stmt pack,
                                      ir::Stmt compute) const {
  ir::Program program;
  program.name = std::string(name());
  program.buffers = args.list();
  program.num_inputs = static_cast<int>(program.buffers.size()) - 1;
  program.num_outputs = 1;
  program.buffers.push_back(wp);
  program.stages = {{"dense_pack_weight", std::move(pack), false},
                    {"dense_pack_compute", std::move(compute), true}};
  return program;
}

}  // namespace kiln::ops
