#include "compiler/lower_packed_elementwise.h"

#include <map>

#include "compiler/lowering_util.h"

namespace kiln::compiler {

using frontend::Graph;
using frontend::Node;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

namespace {

// [n, c, h, w] in blocks of b: [n, c / b, h, w, b].
std::vector<int64_t> packed_of(const std::vector<int64_t>& nchw, int64_t b) {
  return {nchw[0], nchw[1] / b, nchw[2], nchw[3], b};
}

// body(n, cb, h, w, lane) over a packed shape [n, cb, h, w, b]: the rows (n, cb, h) in parallel,
// w serial, the b lanes as SIMD bodies.
Stmt over_packed(const std::vector<int64_t>& packed, const ops::TargetInfo& target,
                 const std::function<Stmt(const std::vector<Expr>& at)>& body) {
  const int64_t blocks = packed[1], height = packed[2];
  Expr f = ir::var("n_cb_h"), w = ir::var("w");
  Expr n = f / Expr(blocks * height), cb = f / Expr(height) % Expr(blocks), h = f % Expr(height);
  Stmt lanes = vector_span(Expr(0), packed[4], target, [&](const Expr& lane) {
    return body({n, cb, h, w, lane});
  });
  return ir::For(f, packed[0] * blocks * height, LoopKind::kParallel,
                 ir::For(w, packed[3], LoopKind::kSerial, lanes));
}

}  // namespace

Result<ir::Program> lower_packed_elementwise_group(const Graph& graph,
                                                   const ElementwiseGroup& group,
                                                   const std::vector<int64_t>& packed_shape,
                                                   const std::set<std::string>& packed_inputs,
                                                   const ops::TargetInfo& target) {
  if (group.nodes.empty()) return InternalError("lower_packed_elementwise_group: an empty group");
  const Node& last = *group.nodes.back();
  const std::string& out_name = group.output();
  KILN_RETURN_IF_ERROR(check_float(graph, last, out_name));
  const std::vector<int64_t>& shape = graph.tensor(out_name).shape;
  if (shape.size() != 4 || packed_shape.size() != 5 || packed_shape[4] <= 0 ||
      shape[1] % packed_shape[4] != 0 || packed_of(shape, packed_shape[4]) != packed_shape) {
    return inconsistent(last, "output " + frontend::dims_text(shape) + " is not packed as " +
                                  frontend::dims_text(packed_shape));
  }
  const int64_t b = packed_shape[4];
  std::map<std::string, ir::Buffer> buffers;
  std::vector<ir::Buffer> inputs;
  for (const std::string& name : external_inputs(graph, group)) {
    bool packed = packed_inputs.count(name) > 0;
    if (packed && graph.tensor(name).shape != shape) {
      return inconsistent(last, "packed input '" + name + "' does not have the output's shape");
    }
    buffers[name] = packed ? ir::Buffer(name, packed_shape, ir::BufferScope::kArgument)
                           : tensor_buffer(graph, name);
    inputs.push_back(buffers[name]);
  }
  ir::Buffer out(out_name, packed_shape, ir::BufferScope::kArgument);

  Status error = Status::Ok();
  Stmt body = over_packed(packed_shape, target, [&](const std::vector<Expr>& at) -> Stmt {
    const std::vector<Expr> logical = {at[0], at[1] * Expr(b) + at[4], at[2], at[3]};
    Result<Expr> value = group_value(
        graph, group, logical, [&](const std::string& name, const std::vector<Expr>& idx) {
          // A packed input has the output's shape: it is read where the output is written.
          return packed_inputs.count(name) ? buffers.at(name).load(at) : buffers.at(name).load(idx);
        });
    if (!value.ok()) {
      error = value.status();
      return ir::Seq({});
    }
    return ir::Store(out, at, *value);
  });
  KILN_RETURN_IF_ERROR(error);
  return make_program(kernel_name(last) + "_packed", std::move(inputs), {out}, body);
}

bool is_packable_concat(const Graph& graph, const Node& node, int64_t block) {
  if (node.op_type != "Concat" || node.outputs.empty() || block <= 0) return false;
  const std::vector<int64_t>& shape = graph.tensor(node.outputs[0]).shape;
  if (shape.size() != 4) return false;
  int64_t axis = node.attr_int("axis", 0);
  if (axis != 1 && axis != -3) return false;
  for (const std::string& in : node.inputs) {
    if (in.empty()) return false;
    const std::vector<int64_t>& s = graph.tensor(in).shape;
    if (s.size() != 4 || s[1] % block != 0) return false;
  }
  return true;
}

Result<ir::Program> lower_packed_concat(const Graph& graph, const Node& node, int64_t block,
                                        const std::set<std::string>& packed_inputs,
                                        const ops::TargetInfo& target) {
  if (!is_packable_concat(graph, node, block)) {
    return unsupported(node, "a packed Concat in blocks of " + std::to_string(block) +
                                 " (4-D tensors along the channels, each a multiple of the block)");
  }
  const std::vector<int64_t>& shape = graph.tensor(node.outputs[0]).shape;
  const std::vector<int64_t> out_packed = packed_of(shape, block);
  ir::Buffer out(node.outputs[0], out_packed, ir::BufferScope::kArgument);
  std::vector<ir::Buffer> inputs;
  std::vector<Stmt> copies;
  int64_t offset = 0;  // in blocks
  for (const std::string& name : node.inputs) {
    KILN_RETURN_IF_ERROR(check_float(graph, node, name));
    const std::vector<int64_t>& s = graph.tensor(name).shape;
    if (s[0] != shape[0] || s[2] != shape[2] || s[3] != shape[3]) {
      return inconsistent(node, "input '" + name + "' of shape " + frontend::dims_text(s) +
                                    " does not fit output " + frontend::dims_text(shape));
    }
    const std::vector<int64_t> in_packed = packed_of(s, block);
    const Expr first(offset);
    if (packed_inputs.count(name)) {
      ir::Buffer in(name, in_packed, ir::BufferScope::kArgument);
      inputs.push_back(in);
      // Each (n, block) row of the input is h * w * b contiguous floats of the output.
      const int64_t blocks = in_packed[1], row = s[2] * s[3] * block;
      copies.push_back(
          parallel_rows(s[0] * blocks, row, target, [&](const Expr& r, const Expr& col) {
            Expr out_row = r / Expr(blocks) * Expr(out_packed[1]) + first + r % Expr(blocks);
            return ir::StoreFlat(out, out_row * Expr(row) + col, in.load_flat(r * Expr(row) + col));
          }));
    } else {
      ir::Buffer in = tensor_buffer(graph, name);
      inputs.push_back(in);
      copies.push_back(over_packed(in_packed, target, [&](const std::vector<Expr>& at) {
        return ir::Store(out, {at[0], first + at[1], at[2], at[3], at[4]},
                         in.load({at[0], at[1] * Expr(block) + at[4], at[2], at[3]}));
      }));
    }
    offset += in_packed[1];
  }
  if (offset != out_packed[1]) return inconsistent(node, "inputs do not fill the output");
  return make_program(kernel_name(node) + "_packed", std::move(inputs), {out},
                      ir::Seq(std::move(copies)));
}

}  // namespace kiln::compiler
