#include "compiler/layout_programs.h"

#include <algorithm>

#include "compiler/lowering_util.h"
#include "ops/conv_common.h"

namespace kiln::compiler {

namespace {

using ir::Expr;
using ir::LoopKind;

// body(col) for col in [0, extent) as SIMD bodies of `vec` lanes (the chunk loop of kind
// `chunks`) and a vectorized tail.
ir::Stmt simd_columns(int64_t extent, int64_t vec, LoopKind chunks,
                      const std::function<ir::Stmt(const Expr&)>& body) {
  std::vector<ir::Stmt> columns;
  if (extent / vec > 0) {
    Expr co = ir::var("co"), ci = ir::var("ci");
    columns.push_back(ir::For(co, extent / vec, chunks,
                              ir::For(ci, vec, LoopKind::kVectorized, body(co * Expr(vec) + ci))));
  }
  if (extent % vec > 0) {
    Expr ct = ir::var("ct");
    columns.push_back(
        ir::For(ct, extent % vec, LoopKind::kVectorized, body(Expr(extent / vec * vec) + ct)));
  }
  return ir::Seq(columns);
}

// One stage `name` over buffers {in, out}.
ir::Program one_stage_program(const ir::Buffer& in, const ir::Buffer& out, ir::Stmt body,
                              const std::string& name) {
  ir::Program program;
  program.name = name;
  program.buffers = {in, out};
  program.num_inputs = 1;
  program.num_outputs = 1;
  program.stages = {{name, std::move(body)}};
  return program;
}

}  // namespace

ir::Program matmul_operand_program(const std::vector<int64_t>& in_shape,
                                   const std::vector<int64_t>& batch, bool transpose,
                                   const std::string& name) {
  size_t rank = in_shape.size();
  int64_t r = in_shape[rank - 2], c = in_shape[rank - 1];
  int64_t rows = transpose ? c : r, cols = transpose ? r : c;
  std::vector<int64_t> in_batch(in_shape.begin(), in_shape.end() - 2);
  // Align the operand's batch dimensions to the right of `batch` (numpy broadcasting).
  in_batch.insert(in_batch.begin(), batch.size() - std::min(batch.size(), in_batch.size()), 1);
  ir::Buffer in("in", in_shape, ir::BufferScope::kArgument);
  ir::Buffer out("out", {product(batch), rows, cols}, ir::BufferScope::kArgument);
  Expr b = ir::var("b"), i = ir::var("i"), j = ir::var("j");
  // b -> the operand's flat batch index: unravel over `batch`, ravel over in_batch (1 -> 0).
  Expr bb(int64_t{0});
  Expr rest = b;
  int64_t stride_out = product(batch), stride_in = 1;
  std::vector<Expr> coords(batch.size());
  for (size_t d = 0; d < batch.size(); ++d) {
    stride_out /= batch[d];
    coords[d] = stride_out > 1 ? rest / Expr(stride_out) : rest;
    rest = stride_out > 1 ? rest % Expr(stride_out) : Expr(int64_t{0});
  }
  for (size_t d = batch.size(); d-- > 0;) {
    if (in_batch[d] != 1) bb = bb + coords[d] * Expr(stride_in);
    stride_in *= in_batch[d];
  }
  Expr src = transpose ? (bb * Expr(r) + j) * Expr(c) + i : (bb * Expr(r) + i) * Expr(c) + j;
  ir::Stmt body = ir::Store(out, {b, i, j}, in.load_flat(src));
  ir::Program program;
  program.name = name;
  program.buffers = {in, out};
  program.num_inputs = 1;
  program.num_outputs = 1;
  program.stages = {
      {name, ir::LoopNest({{b, product(batch)}, {i, rows, LoopKind::kParallel}, {j, cols}}, body)}};
  return program;
}

ir::Program pointwise_program(const std::vector<int64_t>& shape, int lanes, const ir::Buffer& in,
                              const ir::Buffer& out,
                              const std::function<ir::Expr(const std::vector<ir::Expr>&)>& value,
                              const std::string& name) {
  size_t rank = shape.size();
  std::vector<Expr> idx;
  std::vector<ir::LoopSpec> outer;
  for (size_t d = 0; d + 1 < rank; ++d) {
    idx.push_back(ir::var("i" + std::to_string(d)));
    outer.push_back({idx.back(), shape[d], d == 0 ? LoopKind::kParallel : LoopKind::kSerial});
  }
  int64_t inner = shape[rank - 1];
  int64_t vec = std::max(1, lanes);
  auto body = [&](const Expr& col) {
    std::vector<Expr> at = idx;
    at.push_back(col);
    return ir::Store(out, at, value(at));
  };
  ir::Stmt columns =
      simd_columns(inner, vec, rank == 1 ? LoopKind::kParallel : LoopKind::kSerial, body);
  return one_stage_program(in, out, ir::LoopNest(outer, columns), name);
}

ir::Program unpack_program(const ir::Buffer& in, const ir::Buffer& out, int lanes,
                           const std::string& name) {
  // Blocked: one packed row in[n, cb, h, :, :] (w * b floats, cache-resident) is written out as
  // the b rows out[n, cb * b + l, h, :], each in SIMD bodies along w (loads of stride b from that
  // row, contiguous stores); the rows are parallel.
  const std::vector<int64_t>& ps = in->shape;  // n, c / b, h, w, b
  int64_t b = ps[4], width = ps[3];
  int64_t vec = std::max(1, lanes);
  Expr f = ir::var("n_cb_h"), l = ir::var("l");
  Expr h = f % Expr(ps[2]), cb = f / Expr(ps[2]) % Expr(ps[1]), n = f / Expr(ps[2] * ps[1]);
  auto copy = [&](const Expr& w) {
    return ir::Store(out, {n, cb * Expr(b) + l, h, w}, in.load({n, cb, h, w, l}));
  };
  ir::Stmt columns = simd_columns(width, vec, LoopKind::kSerial, copy);
  return one_stage_program(in, out,
                           ir::For(f, ps[0] * ps[1] * ps[2], LoopKind::kParallel,
                                   ir::For(l, b, LoopKind::kSerial, columns)),
                           name);
}

ir::Program repack_program(const ir::Buffer& in, const ir::Buffer& out, const std::string& name) {
  const std::vector<int64_t>& from = in->shape;  // n, c / a, h, w, a
  ops::conv::Geometry g;
  g.n = from[0];
  g.c = g.k = from[1] * from[4];
  g.h = g.p = from[2];
  g.w = g.q = from[3];
  return one_stage_program(in, out, ops::conv::pack_data(g, out->shape[4], in, out), name);
}

ir::Program copy_program(int64_t elements, const std::string& name) {
  ir::Buffer in("in", {elements}, ir::BufferScope::kArgument);
  ir::Buffer out("out", {elements}, ir::BufferScope::kArgument);
  Expr i = ir::var("i");
  ir::Program program;
  program.name = name;
  program.buffers = {in, out};
  program.num_inputs = 1;
  program.num_outputs = 1;
  program.stages = {
      {name, ir::For(i, elements, LoopKind::kSerial, ir::Store(out, {i}, in.load({i})))}};
  return program;
}

}  // namespace kiln::compiler
