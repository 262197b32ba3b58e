// dense (nn.Linear): C[M,N] = A[M,K] * W[N,K]^T (+ bias[N]), as TVM's x86 templates
// dense_nopack.x86 and dense_pack.x86 (topi/x86/dense.py at v0.16, reference/autotvm.md §10).
//
// Both templates keep AutoTVM's knobs, entity order and fallbacks, so TVM logs apply. Their
// schedules lower to loop nests written for kiln's code generator: the innermost loop of every
// hot nest is a vectorized loop with a straight-line body whose loads are contiguous (vector)
// or loop-invariant (broadcast), around it unrolled loops, and the accumulator tile is a small
// stack array with constant indices once unrolled, which LLVM keeps in registers.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ops/limits.h"
#include "ops/registry.h"

namespace kiln::ops {
namespace {

using ir::Buffer;
using ir::BufferScope;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

std::string str(int64_t v) { return std::to_string(v); }

// Options of a "factors" split into `num_outputs` axes.
SplitOptions splits(int num_outputs, std::function<bool(const SplitEntity&)> filter = nullptr) {
  SplitOptions opts;
  opts.num_outputs = num_outputs;
  opts.filter = std::move(filter);
  return opts;
}

// The tile sizes of split knob `knob` over an axis of `length`, outermost first, with a
// leading -1 resolved. Fails (never aborts) on a missing knob or sizes that do not tile the
// axis exactly (every dense split has no_tail, so a config of the space always does).
Result<std::vector<int64_t>> tile_sizes(std::string_view tmpl, const ConfigEntity& cfg,
                                        std::string_view knob, int64_t length, size_t num_outputs) {
  std::string where = std::string(tmpl) + ": knob " + std::string(knob);
  const Entity* e = cfg.find(knob);
  const SplitEntity* split = e ? std::get_if<SplitEntity>(e) : nullptr;
  if (split == nullptr) return InstantiationError(where + " is missing or not a split");
  std::vector<int64_t> size = split->size;
  if (size.size() != num_outputs) {
    return InstantiationError(where + " has " + str(size.size()) + " sizes, expected " +
                              str(num_outputs));
  }
  int64_t inner = 1;
  for (size_t i = 1; i < size.size(); ++i) {
    if (size[i] < 1 || size[i] > length || inner * size[i] > length) {
      return InstantiationError(where + " size " + str(size[i]) + " does not fit length " +
                                str(length));
    }
    inner *= size[i];
  }
  if (length % inner != 0 || (size[0] != -1 && size[0] != length / inner)) {
    return InstantiationError(where + " does not tile length " + str(length) + " exactly");
  }
  size[0] = length / inner;
  return size;
}

int64_t vector_ops(int64_t lanes, const TargetInfo& target) {
  int64_t simd = std::max(1, target.simd_lanes);
  return (lanes + simd - 1) / simd;
}

Status check_tile(std::string_view tmpl, const std::string& what, int64_t elements) {
  int64_t bytes = elements * 4;
  if (bytes <= kMaxLocalBytes) return Status::Ok();
  return InstantiationError(std::string(tmpl) + ": " + what + " needs " + str(bytes) +
                            " bytes of stack, above the limit of " + str(kMaxLocalBytes));
}

Status check_unroll(std::string_view tmpl, const std::string& what, int64_t ops) {
  if (ops <= kMaxUnrolledVectorOps) return Status::Ok();
  return InstantiationError(std::string(tmpl) + ": unrolling " + what + " gives " + str(ops) +
                            " SIMD statements, above the limit of " + str(kMaxUnrolledVectorOps));
}

// A Result<ConfigEntity> that a template builds from its own space cannot fail; if it does,
// the template is wrong.
ConfigEntity must(Result<ConfigEntity> config, std::string_view tmpl) {
  if (!config.ok()) {
    std::fprintf(stderr, "%.*s: bad fallback config: %s\n", static_cast<int>(tmpl.size()),
                 tmpl.data(), config.status().message().c_str());
    std::abort();
  }
  return std::move(config).value();
}

// Largest divisor of n in [1, limit].
int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

struct DenseShape {
  int64_t m, n, k;
  bool bias;
};

// What the two dense templates share: the operator, its tensors and its reference.
class DenseBase : public Template {
 public:
  std::string_view op() const override { return "dense"; }

  Result<Workload> normalize(const Workload& w) const override {
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

  std::vector<TensorSpec> inputs(const Workload& w) const override {
    DenseShape s = shape(w);
    std::vector<TensorSpec> out = {{"data", {s.m, s.k}}, {"weight", {s.n, s.k}}};
    if (s.bias) out.push_back({"bias", {s.n}});
    return out;
  }

  std::vector<TensorSpec> outputs(const Workload& w) const override {
    DenseShape s = shape(w);
    return {{"output", {s.m, s.n}}};
  }

  double flop(const Workload& w) const override {
    DenseShape s = shape(w);
    return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  }

  void reference(const Workload& w, const std::vector<const float*>& in,
                 const std::vector<float*>& out) const override {
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

  nlohmann::json tvm_args(const Workload& w) const override {
    DenseShape s = shape(w);
    nlohmann::json bias = nullptr;
    if (s.bias) bias = {"TENSOR", {s.n}, "float32"};
    return {{"TENSOR", {s.m, s.k}, "float32"}, {"TENSOR", {s.n, s.k}, "float32"}, bias, "float32"};
  }

 protected:
  static DenseShape shape(const Workload& w) {
    auto it = w.params.find("bias");
    return {w.at("M"), w.at("N"), w.at("K"), it != w.params.end() && it->second != 0};
  }

  // The program's argument buffers, in kernel argument order.
  struct Args {
    Buffer a, w, bias, c;
    std::vector<Buffer> list() const {
      std::vector<Buffer> out = {a, w};
      if (bias.defined()) out.push_back(bias);
      out.push_back(c);
      return out;
    }
  };
  static Args make_args(const DenseShape& s) {
    Args args;
    args.a = Buffer("A", {s.m, s.k}, BufferScope::kArgument);
    args.w = Buffer("W", {s.n, s.k}, BufferScope::kArgument);
    if (s.bias) args.bias = Buffer("bias", {s.n}, BufferScope::kArgument);
    args.c = Buffer("C", {s.m, s.n}, BufferScope::kArgument);
    return args;
  }
};

// ------------------------------------------------------------------------------------------
// dense_nopack.x86: partial sums CC[y, x, 0:vec] over K in chunks of vec = tile_k[-1] (one
// vector FMA per (y, x) and chunk), then a horizontal sum over vec.

class DenseNopack final : public DenseBase {
 public:
  std::string_view name() const override { return "dense_nopack.x86"; }

  ConfigSpace space(const Workload& w) const override {
    DenseShape s = shape(w);
    ConfigSpace space;
    space.define_split("tile_y", s.m, splits(2));
    space.define_split("tile_x", s.n, splits(2));
    space.define_split("tile_k", s.k, splits(2));
    return space;
  }

  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    DenseShape s = shape(w);
    int64_t bn = largest_divisor_at_most(s.k, 2 * int64_t{std::max(1, target.simd_lanes)});
    return must(space.make_config({{"tile_y", SplitEntity{{1, s.m}}},
                                   {"tile_x", SplitEntity{{s.n, 1}}},
                                   {"tile_k", SplitEntity{{s.k / bn, bn}}}}),
                name());
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target) const override {
    DenseShape s = shape(w);
    KILN_ASSIGN_OR_RETURN(auto tile_y, tile_sizes(name(), config, "tile_y", s.m, 2));
    KILN_ASSIGN_OR_RETURN(auto tile_x, tile_sizes(name(), config, "tile_x", s.n, 2));
    KILN_ASSIGN_OR_RETURN(auto tile_k, tile_sizes(name(), config, "tile_k", s.k, 2));
    const int64_t yo_n = tile_y[0], ty = tile_y[1], xo_n = tile_x[0], tx = tile_x[1];
    const int64_t ko_n = tile_k[0], vec = tile_k[1];
    KILN_RETURN_IF_ERROR(check_tile(
        name(), "tile CC[" + str(ty) + "][" + str(tx) + "][" + str(vec) + "]", ty * tx * vec));
    KILN_RETURN_IF_ERROR(check_unroll(
        name(), "the " + str(ty) + "x" + str(tx) + " tile of " + str(vec) + "-lane vectors",
        ty * tx * vector_ops(vec, target)));
    KILN_RETURN_IF_ERROR(check_unroll(name(), "the reduction over " + str(vec) + " lanes", vec));

    Args args = make_args(s);
    Buffer cc("CC", {ty, tx, vec}, BufferScope::kLocal);
    Expr f = ir::var("yo.xo"), yo = f / xo_n, xo = f % xo_n;

    // CC[y, x, :] = 0, then CC[y, x, v] += A[row, k*vec+v] * W[col, k*vec+v] for every chunk k.
    auto tile_nest = [&](const std::function<Stmt(Expr, Expr, Expr)>& body) {
      Expr y = ir::var("y"), x = ir::var("x"), v = ir::var("v");
      return ir::For(y, ty, LoopKind::kUnrolled,
                     ir::For(x, tx, LoopKind::kUnrolled,
                             ir::For(v, vec, LoopKind::kVectorized, body(y, x, v))));
    };
    Stmt init = tile_nest([&](Expr y, Expr x, Expr v) {
      return ir::Store(cc, {y, x, v}, ir::f32(0));
    });
    Expr k = ir::var("k");
    Stmt update =
        ir::For(k, ko_n, LoopKind::kSerial, tile_nest([&](Expr y, Expr x, Expr v) {
                  Expr kk = k * vec + v;
                  return ir::Store(cc, {y, x, v},
                                   cc.load({y, x, v}) + args.a.load({yo * ty + y, kk}) *
                                                            args.w.load({xo * tx + x, kk}));
                }));

    // C[row, col] = (bias[col]) + sum over v of CC[y, x, v].
    Expr y = ir::var("yi"), x = ir::var("xi"), v = ir::var("kk");
    Expr row = yo * ty + y, col = xo * tx + x;
    Stmt reduce = ir::Seq(
        {ir::Store(args.c, {row, col}, s.bias ? args.bias.load({col}) : ir::f32(0)),
         ir::For(v, vec, LoopKind::kUnrolled,
                 ir::Store(args.c, {row, col}, args.c.load({row, col}) + cc.load({y, x, v})))});
    Stmt write = ir::For(y, ty, LoopKind::kSerial, ir::For(x, tx, LoopKind::kSerial, reduce));

    Stmt body = ir::For(f, yo_n * xo_n, LoopKind::kParallel,
                        ir::Allocate(cc, ir::Seq({init, update, write})));
    ir::Program program;
    program.name = std::string(name());
    program.buffers = args.list();
    program.num_inputs = static_cast<int>(program.buffers.size()) - 1;
    program.num_outputs = 1;
    program.stages = {{"dense_nopack_compute", body, true}};
    return program;
  }
};

// ------------------------------------------------------------------------------------------
// dense_pack.x86: W is packed to Wp[N/bn][K][bn] (bn = tile_x[-1]) by an untimed stage, as
// AutoTVM substitutes a pre-packed placeholder while tuning. Each (yo, xo) tile keeps
// CC[tile_y[-1]][bn] in registers: per k, a broadcast of A[row, k] times a vector of Wp.

class DensePack final : public DenseBase {
 public:
  std::string_view name() const override { return "dense_pack.x86"; }

  ConfigSpace space(const Workload& w) const override {
    DenseShape s = shape(w);
    ConfigSpace space;
    space.define_split("tile_y", s.m, splits(3));
    space.define_split("tile_x", s.n, splits(3));
    space.define_split("tile_k", s.k, splits(2));
    space.define_split("tile_inner", s.m,
                       splits(2, [](const SplitEntity& e) { return e.size.back() <= 16; }));
    return space;
  }

  ConfigEntity fallback(const Workload& w, const ConfigSpace& space,
                        const TargetInfo& target) const override {
    DenseShape s = shape(w);
    // TVM's middle factor: doubles while more than 4 blocks remain and their count is even.
    auto middle = [](int64_t blocks) {
      int64_t mid = 1;
      while (blocks / mid > 4 && (blocks / mid) % 2 == 0) mid *= 2;
      return mid;
    };
    int64_t x_ii = largest_divisor_at_most(s.n, 2 * int64_t{std::max(1, target.simd_lanes)});
    int64_t x_oi = middle(s.n / x_ii);
    int64_t y_ii = 8;
    while (s.m % y_ii != 0) y_ii /= 2;
    int64_t y_oi = middle(s.m / y_ii);
    return must(space.make_config({{"tile_y", SplitEntity{{s.m / y_ii / y_oi, y_oi, y_ii}}},
                                   {"tile_x", SplitEntity{{s.n / x_ii / x_oi, x_oi, x_ii}}},
                                   {"tile_k", SplitEntity{{s.k, 1}}},
                                   {"tile_inner", SplitEntity{{s.m / y_ii, y_ii}}}}),
                name());
  }

  Result<ir::Program> instantiate(const Workload& w, const ConfigEntity& config,
                                  const TargetInfo& target) const override {
    DenseShape s = shape(w);
    KILN_ASSIGN_OR_RETURN(auto tile_y, tile_sizes(name(), config, "tile_y", s.m, 3));
    KILN_ASSIGN_OR_RETURN(auto tile_x, tile_sizes(name(), config, "tile_x", s.n, 3));
    KILN_ASSIGN_OR_RETURN(auto tile_k, tile_sizes(name(), config, "tile_k", s.k, 2));
    KILN_ASSIGN_OR_RETURN(auto tile_inner, tile_sizes(name(), config, "tile_inner", s.m, 2));
    const int64_t yt_n = tile_y[0], yo_n = tile_y[1], ty = tile_y[2];
    const int64_t xt_n = tile_x[0], xo_n = tile_x[1], bn = tile_x[2];
    const int64_t ko_n = tile_k[0], kt = tile_k[1];
    // TVM splits y by tile_inner[-1] only when it is > 1; a split at least ty wide is no split.
    const int64_t ti = tile_inner[1] > 1 && tile_inner[1] < ty ? tile_inner[1] : ty;
    KILN_RETURN_IF_ERROR(check_tile(name(), "tile CC[" + str(ty) + "][" + str(bn) + "]", ty * bn));
    KILN_RETURN_IF_ERROR(check_unroll(
        name(), str(kt) + " k-steps of a " + str(ty) + "-row tile of " + str(bn) + "-lane vectors",
        kt * ty * vector_ops(bn, target)));

    Args args = make_args(s);
    Buffer wp("Wp", {s.n / bn, s.k, bn}, BufferScope::kWorkspace);

    // Untimed: Wp[xb, k, j] = W[xb*bn + j, k].
    Expr pb = ir::var("xb"), pj = ir::var("j"), pk = ir::var("k");
    Stmt pack =
        ir::For(pb, s.n / bn, LoopKind::kParallel,
                ir::For(pj, bn, LoopKind::kSerial,
                        ir::For(pk, s.k, LoopKind::kSerial,
                                ir::Store(wp, {pb, pk, pj}, args.w.load({pb * bn + pj, pk})))));

    // TVM: fuse(xt, yt) -> parallel, fuse(yo, xo), CC computed at (yo, xo).
    Expr f = ir::var("xt.yt"), xt = f / yt_n, yt = f % yt_n;
    Expr yo = ir::var("yo"), xo = ir::var("xo");
    Expr row0 = (yt * yo_n + yo) * ty, xb = xt * xo_n + xo;
    Buffer cc("CC", {ty, bn}, BufferScope::kLocal);

    // for y in [y0, y0 + rows) (unrolled): for x (vectorized): stmt(y, x)
    auto rows = [&](Expr y0, int64_t count, const std::function<Stmt(Expr, Expr)>& stmt) {
      Expr y = ir::var("yi"), x = ir::var("xi");
      return ir::For(y, count, LoopKind::kUnrolled,
                     ir::For(x, bn, LoopKind::kVectorized, stmt(y0 + y, x)));
    };
    Stmt init = rows(0, ty, [&](Expr y, Expr x) { return ir::Store(cc, {y, x}, ir::f32(0)); });

    Expr ko = ir::var("ko");
    // for ki (unrolled): rows [y0, y0 + count) of CC += A[row, k] * Wp[xb, k, :].
    auto k_block = [&](Expr y0, int64_t count) {
      Expr ki = ir::var("ki"), k = ko * kt + ki;
      return ir::For(ki, kt, LoopKind::kUnrolled, rows(y0, count, [&](Expr y, Expr x) {
                       return ir::Store(
                           cc, {y, x},
                           cc.load({y, x}) + args.a.load({row0 + y, k}) * wp.load({xb, k, x}));
                     }));
    };
    // With tile_inner, rows go in blocks of ti (each over all ki); a last partial block of
    // ty % ti rows is its own nest instead of TVM's guarded tail.
    Stmt kernel;
    if (ti == ty) {
      kernel = k_block(0, ty);
    } else {
      Expr yb = ir::var("yb");
      std::vector<Stmt> blocks = {ir::For(yb, ty / ti, LoopKind::kUnrolled, k_block(yb * ti, ti))};
      if (ty % ti != 0) blocks.push_back(k_block(ty / ti * ti, ty % ti));
      kernel = ir::Seq(blocks);
    }
    Stmt update = ir::For(ko, ko_n, LoopKind::kSerial, kernel);

    Stmt write = rows(0, ty, [&](Expr y, Expr x) {
      Expr col = xb * bn + x;
      Expr value = cc.load({y, x});
      if (s.bias) value = value + args.bias.load({col});
      return ir::Store(args.c, {row0 + y, col}, value);
    });

    Stmt tiles = ir::For(yo, yo_n, LoopKind::kSerial,
                         ir::For(xo, xo_n, LoopKind::kSerial, ir::Seq({init, update, write})));
    Stmt compute = ir::For(f, xt_n * yt_n, LoopKind::kParallel, ir::Allocate(cc, tiles));

    ir::Program program;
    program.name = std::string(name());
    program.buffers = args.list();
    program.num_inputs = static_cast<int>(program.buffers.size()) - 1;
    program.num_outputs = 1;
    program.buffers.push_back(wp);
    program.stages = {{"dense_pack_weight", pack, false}, {"dense_pack_compute", compute, true}};
    return program;
  }
};

}  // namespace

const Template& dense_nopack_template() {
  static const DenseNopack instance;
  return instance;
}

const Template& dense_pack_template() {
  static const DensePack instance;
  return instance;
}

}  // namespace kiln::ops
