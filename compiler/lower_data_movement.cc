// Operators that only move elements: Transpose, Concat, Split, Slice, Pad, Gather, and kiln's
// StridedCopy (compiler/strided_copy_fusion.h). Most are
// affine copies (out[out_base + sum o_d * out_stride_d] = in[in_base + sum o_d * in_stride_d]
// over a box of output coordinates o), coalesced so that the innermost loop is as long as it
// can be, then run as parallel rows of SIMD column spans. Pad's edge and reflect modes map each
// output coordinate back into the input.
#include <algorithm>

#include "compiler/lowering_util.h"
#include "compiler/lowerings.h"
#include "compiler/op_lowering.h"
#include "compiler/strided_copy_fusion.h"

namespace kiln::compiler {

using frontend::Graph;
using frontend::Node;
using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

namespace {

struct AffineCopy {
  std::vector<int64_t> extents;
  int64_t in_base = 0, out_base = 0;
  std::vector<int64_t> in_strides, out_strides;
};

// Dimensions of extent 1 dropped, neighbours that are contiguous in both buffers merged.
AffineCopy coalesce(const AffineCopy& c) {
  AffineCopy out;
  out.in_base = c.in_base;
  out.out_base = c.out_base;
  for (size_t d = 0; d < c.extents.size(); ++d) {
    if (c.extents[d] == 1) continue;
    if (!out.extents.empty() && out.in_strides.back() == c.in_strides[d] * c.extents[d] &&
        out.out_strides.back() == c.out_strides[d] * c.extents[d]) {
      out.extents.back() *= c.extents[d];
      out.in_strides.back() = c.in_strides[d];
      out.out_strides.back() = c.out_strides[d];
      continue;
    }
    out.extents.push_back(c.extents[d]);
    out.in_strides.push_back(c.in_strides[d]);
    out.out_strides.push_back(c.out_strides[d]);
  }
  if (out.extents.empty()) {
    out.extents = {1};
    out.in_strides = {1};
    out.out_strides = {1};
  }
  return out;
}

Stmt affine_copy(const ir::Buffer& in, const ir::Buffer& out, const AffineCopy& copy,
                 const ops::TargetInfo& target) {
  for (int64_t e : copy.extents) {
    if (e == 0) return ir::Seq({});
  }
  AffineCopy c = coalesce(copy);
  std::vector<int64_t> outer(c.extents.begin(), c.extents.end() - 1);
  return parallel_rows(product(outer), c.extents.back(), target,
                       [&](const Expr& row, const Expr& col) {
                         std::vector<Expr> coords = unfuse(row, outer);
                         coords.push_back(col);
                         Expr src(c.in_base), dst(c.out_base);
                         for (size_t d = 0; d < coords.size(); ++d) {
                           src = src + coords[d] * Expr(c.in_strides[d]);
                           dst = dst + coords[d] * Expr(c.out_strides[d]);
                         }
                         return ir::StoreFlat(out, dst, in.load_flat(src));
                       });
}

std::vector<int64_t> shape_of(const Graph& graph, const std::string& name) {
  return graph.tensor(name).shape;
}

Status check_shape(const Node& node, const std::vector<int64_t>& expected,
                   const std::vector<int64_t>& actual) {
  if (expected != actual) {
    return inconsistent(node, "output shape " + frontend::dims_text(actual) + ", expected " +
                                  frontend::dims_text(expected));
  }
  return Status::Ok();
}

Stmt transpose_stmt(const ir::Buffer& in, const ir::Buffer& out,
                    const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm,
                    const ops::TargetInfo& target) {
  std::vector<int64_t> in_strides = row_major_strides(in_shape);
  AffineCopy c;
  for (int64_t p : perm) {
    c.extents.push_back(in_shape[p]);
    c.in_strides.push_back(in_strides[p]);
  }
  c.out_strides = row_major_strides(c.extents);
  return affine_copy(in, out, c, target);
}

Result<ir::Program> lower_transpose(const Graph& graph, const Node& node,
                                    const ops::TargetInfo& target) {
  std::vector<int64_t> in_shape = shape_of(graph, node.inputs.at(0));
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  std::optional<std::vector<int64_t>> perm = transpose_perm(node, rank);
  if (!perm) return inconsistent(node, "perm is not a permutation of the input's dimensions");
  std::vector<int64_t> expected;
  for (int64_t p : *perm) expected.push_back(in_shape[p]);
  KILN_RETURN_IF_ERROR(check_shape(node, expected, shape_of(graph, node.outputs.at(0))));
  ir::Buffer in = tensor_buffer(graph, node.inputs[0]), out = tensor_buffer(graph, node.outputs[0]);
  return make_program(kernel_name(node), {in}, {out},
                      transpose_stmt(in, out, in_shape, *perm, target));
}

Result<ir::Program> lower_concat(const Graph& graph, const Node& node,
                                 const ops::TargetInfo& target) {
  std::vector<int64_t> out_shape = shape_of(graph, node.outputs.at(0));
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, node.attr_int("axis", 0), rank));
  ir::Buffer out = tensor_buffer(graph, node.outputs[0]);
  std::vector<int64_t> out_strides = row_major_strides(out_shape);
  std::vector<ir::Buffer> inputs;
  std::vector<Stmt> copies;
  int64_t offset = 0;
  for (const std::string& name : node.inputs) {
    KILN_RETURN_IF_ERROR(check_float(graph, node, name));
    std::vector<int64_t> shape = shape_of(graph, name);
    std::vector<int64_t> expected = out_shape;
    if (static_cast<int64_t>(shape.size()) == rank) expected[axis] = shape[axis];
    if (shape != expected) {
      return inconsistent(node, "input '" + name + "' of shape " + frontend::dims_text(shape) +
                                    " does not fit output " + frontend::dims_text(out_shape));
    }
    ir::Buffer in = tensor_buffer(graph, name);
    inputs.push_back(in);
    AffineCopy c;
    c.extents = shape;
    c.in_strides = row_major_strides(shape);
    c.out_strides = out_strides;
    c.out_base = offset * out_strides[axis];
    copies.push_back(affine_copy(in, out, c, target));
    offset += shape[axis];
  }
  if (offset != out_shape[axis]) return inconsistent(node, "inputs do not fill the output");
  return make_program(kernel_name(node), std::move(inputs), {out}, ir::Seq(std::move(copies)));
}

Result<ir::Program> lower_split(const Graph& graph, const Node& node,
                                const ops::TargetInfo& target) {
  std::vector<int64_t> in_shape = shape_of(graph, node.inputs.at(0));
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, node.attr_int("axis", 0), rank));
  // Sizes: the `split` input (opset 13+) or attribute, else equal parts; the outputs' shapes
  // must agree.
  std::vector<int64_t> sizes = node.attr_ints("split", {});
  if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
    KILN_ASSIGN_OR_RETURN(sizes, constant_ints(graph, node, node.inputs[1], "split"));
  }
  const int64_t parts = static_cast<int64_t>(node.outputs.size());
  if (sizes.empty()) {
    if (in_shape[axis] % parts != 0) {
      return inconsistent(node, "dimension " + std::to_string(in_shape[axis]) +
                                    " does not split into " + std::to_string(parts) +
                                    " equal parts");
    }
    sizes.assign(parts, in_shape[axis] / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts) {
    return inconsistent(node, "split has " + std::to_string(sizes.size()) + " sizes for " +
                                  std::to_string(parts) + " outputs");
  }
  ir::Buffer in = tensor_buffer(graph, node.inputs[0]);
  std::vector<int64_t> in_strides = row_major_strides(in_shape);
  std::vector<ir::Buffer> outputs;
  std::vector<Stmt> copies;
  int64_t offset = 0;
  for (int64_t i = 0; i < parts; ++i) {
    std::vector<int64_t> expected = in_shape;
    expected[axis] = sizes[i];
    KILN_RETURN_IF_ERROR(check_shape(node, expected, shape_of(graph, node.outputs[i])));
    ir::Buffer out = tensor_buffer(graph, node.outputs[i]);
    outputs.push_back(out);
    AffineCopy c;
    c.extents = expected;
    c.in_strides = in_strides;
    c.in_base = offset * in_strides[axis];
    c.out_strides = row_major_strides(expected);
    copies.push_back(affine_copy(in, out, c, target));
    offset += sizes[i];
  }
  if (offset != in_shape[axis]) return inconsistent(node, "split sizes do not sum to the input");
  return make_program(kernel_name(node), {in}, std::move(outputs), ir::Seq(std::move(copies)));
}

Result<ir::Program> lower_slice(const Graph& graph, const Node& node,
                                const ops::TargetInfo& target) {
  KILN_ASSIGN_OR_RETURN(SliceGeometry slice, slice_geometry(graph, node));
  ir::Buffer in = tensor_buffer(graph, node.inputs[0]), out = tensor_buffer(graph, node.outputs[0]);
  AffineCopy c;
  c.extents = slice.shape;
  c.in_base = slice.base;
  c.in_strides = slice.strides;
  c.out_strides = row_major_strides(slice.shape);
  return make_program(kernel_name(node), {in}, {out}, affine_copy(in, out, c, target));
}

// StridedCopy (compiler/strided_copy_fusion.h): out[o] = in[base + sum o_d * strides_d].
Result<ir::Program> lower_strided_copy(const Graph& graph, const Node& node,
                                       const ops::TargetInfo& target) {
  const std::vector<int64_t> in_shape = shape_of(graph, node.inputs.at(0));
  const std::vector<int64_t> out_shape = shape_of(graph, node.outputs.at(0));
  AffineCopy c;
  c.extents = out_shape;
  c.in_base = node.attr_int("base", -1);
  c.in_strides = node.attr_ints("strides", {});
  c.out_strides = row_major_strides(out_shape);
  if (c.in_strides.size() != out_shape.size()) {
    return inconsistent(node, std::to_string(c.in_strides.size()) + " strides for an output of " +
                                  std::to_string(out_shape.size()) + " dimensions");
  }
  // Every element read lies in the input (an empty output reads none).
  int64_t lo = c.in_base, hi = c.in_base;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    const int64_t span = (out_shape[d] - 1) * c.in_strides[d];
    (span < 0 ? lo : hi) += span;
  }
  if (product(out_shape) > 0 && (lo < 0 || hi >= product(in_shape))) {
    return inconsistent(node, "reads elements " + std::to_string(lo) + " to " + std::to_string(hi) +
                                  " of an input of " + std::to_string(product(in_shape)));
  }
  ir::Buffer in = tensor_buffer(graph, node.inputs[0]), out = tensor_buffer(graph, node.outputs[0]);
  return make_program(kernel_name(node), {in}, {out}, affine_copy(in, out, c, target));
}

Result<ir::Program> lower_pad(const Graph& graph, const Node& node, const ops::TargetInfo& target) {
  std::vector<int64_t> in_shape = shape_of(graph, node.inputs.at(0));
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> raw, pad_amounts(graph, node));
  std::vector<int64_t> axes;
  if (node.inputs.size() > 3 && !node.inputs[3].empty()) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> given,
                          constant_ints(graph, node, node.inputs[3], "axes"));
    for (int64_t a : given) {
      KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, a, rank));
      axes.push_back(axis);
    }
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const int64_t n = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(raw.size()) != 2 * n) {
    return inconsistent(node, "pads has " + std::to_string(raw.size()) + " values for " +
                                  std::to_string(n) + " axes");
  }
  std::vector<int64_t> before(rank, 0), after(rank, 0), expected = in_shape;
  for (int64_t i = 0; i < n; ++i) {
    before[axes[i]] = raw[i];
    after[axes[i]] = raw[n + i];
    expected[axes[i]] += raw[i] + raw[n + i];
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (expected[d] < 0) return inconsistent(node, "pads remove more than the input");
  }
  KILN_RETURN_IF_ERROR(check_shape(node, expected, shape_of(graph, node.outputs.at(0))));
  KILN_RETURN_IF_ERROR(check_float(graph, node, node.inputs[0]));
  std::vector<ir::Buffer> inputs = {tensor_buffer(graph, node.inputs[0])};
  ir::Buffer value;
  if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
    KILN_RETURN_IF_ERROR(check_float(graph, node, node.inputs[2]));
    value = tensor_buffer(graph, node.inputs[2]);
    inputs.push_back(value);
  }
  const ir::Buffer in = inputs[0];
  ir::Buffer out = tensor_buffer(graph, node.outputs[0]);
  const std::string mode = node.attr_string("mode", "constant");
  std::vector<int64_t> in_strides = row_major_strides(in_shape);
  std::vector<int64_t> out_strides = row_major_strides(expected);
  const int64_t total = product(expected);

  Stmt body;
  if (mode == "constant") {
    // The whole output gets the value, then the input's box is copied over it.
    Expr fill = value.defined() ? value.load_flat(Expr(0)) : ir::f32(0);
    Stmt init = parallel_rows(1, total, target, [&](const Expr&, const Expr& col) {
      return ir::StoreFlat(out, col, fill);
    });
    AffineCopy c;
    c.in_strides = in_strides;
    c.out_strides = out_strides;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t in_start = std::max<int64_t>(0, -before[d]);
      int64_t out_start = std::max<int64_t>(0, before[d]);
      c.extents.push_back(
          std::max<int64_t>(0, in_shape[d] - in_start - std::max<int64_t>(0, -after[d])));
      c.in_base += in_start * in_strides[d];
      c.out_base += out_start * out_strides[d];
    }
    body = ir::Seq({init, affine_copy(in, out, c, target)});
  } else if (mode == "edge" || mode == "reflect") {
    for (int64_t d = 0; d < rank; ++d) {
      if (in_shape[d] == 0) return inconsistent(node, mode + " padding of an empty dimension");
      if (mode == "reflect" && (before[d] >= in_shape[d] || after[d] >= in_shape[d])) {
        return unsupported(node, "reflect pads as large as the dimension");
      }
    }
    std::vector<int64_t> outer(expected.begin(), expected.end() - 1);
    const int64_t cols = expected.empty() ? 1 : expected.back();
    // The input coordinate output coordinate o of dimension d reads.
    auto source = [&](const Expr& o, int64_t d) {
      Expr i = o - Expr(before[d]);
      const int64_t last = in_shape[d] - 1;
      if (mode == "edge") return ir::min(ir::max(i, Expr(0)), Expr(last));
      Expr reflected_low = ir::select(i < Expr(0), Expr(0) - i, i);
      return ir::select(reflected_low > Expr(last), Expr(2 * last) - reflected_low, reflected_low);
    };
    body = parallel_rows(product(outer), cols, target, [&](const Expr& row, const Expr& col) {
      std::vector<Expr> coords = unfuse(row, outer);
      coords.push_back(col);
      Expr src(0);
      for (int64_t d = 0; d < rank; ++d) src = src + source(coords[d], d) * Expr(in_strides[d]);
      return ir::StoreFlat(out, row * Expr(cols) + col, in.load_flat(src));
    });
  } else {
    return unsupported(node, "mode '" + mode + "'");
  }
  return make_program(kernel_name(node), std::move(inputs), {out}, body);
}

Result<ir::Program> lower_gather(const Graph& graph, const Node& node,
                                 const ops::TargetInfo& target) {
  std::vector<int64_t> data_shape = shape_of(graph, node.inputs.at(0));
  const int64_t rank = static_cast<int64_t>(data_shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node, node.attr_int("axis", 0), rank));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices,
                        constant_ints(graph, node, node.inputs.at(1), "indices"));
  const std::vector<int64_t> index_shape = shape_of(graph, node.inputs[1]);
  const int64_t dim = data_shape[axis];
  for (int64_t& i : indices) {
    if (i < -dim || i >= dim) {
      return inconsistent(node, "index " + std::to_string(i) + " out of range for dimension " +
                                    std::to_string(dim));
    }
    if (i < 0) i += dim;
  }
  std::vector<int64_t> expected(data_shape.begin(), data_shape.begin() + axis);
  expected.insert(expected.end(), index_shape.begin(), index_shape.end());
  expected.insert(expected.end(), data_shape.begin() + axis + 1, data_shape.end());
  KILN_RETURN_IF_ERROR(check_shape(node, expected, shape_of(graph, node.outputs.at(0))));
  ir::Buffer in = tensor_buffer(graph, node.inputs[0]), out = tensor_buffer(graph, node.outputs[0]);
  const int64_t outer =
      product(std::vector<int64_t>(data_shape.begin(), data_shape.begin() + axis));
  const int64_t inner =
      product(std::vector<int64_t>(data_shape.begin() + axis + 1, data_shape.end()));
  const int64_t count = static_cast<int64_t>(indices.size());
  // Runs of consecutive indices are one block copy each.
  std::vector<Stmt> copies;
  for (int64_t j = 0; j < count;) {
    int64_t len = 1;
    while (j + len < count && indices[j + len] == indices[j] + len) ++len;
    AffineCopy c;
    c.extents = {outer, len * inner};
    c.in_strides = {dim * inner, 1};
    c.in_base = indices[j] * inner;
    c.out_strides = {count * inner, 1};
    c.out_base = j * inner;
    copies.push_back(affine_copy(in, out, c, target));
    j += len;
  }
  constexpr size_t kMaxRuns = 1024;  // one loop nest each: keeps the kernel's code bounded
  if (copies.size() > kMaxRuns) {
    return unsupported(node, std::to_string(copies.size()) +
                                 " runs of non-consecutive indices (kiln copies at most " +
                                 std::to_string(kMaxRuns) + ")");
  }
  return make_program(kernel_name(node), {in}, {out}, ir::Seq(std::move(copies)));
}

}  // namespace

std::optional<std::vector<int64_t>> transpose_perm(const Node& node, int64_t rank) {
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  perm = node.attr_ints("perm", perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < static_cast<int64_t>(sorted.size()); ++i) {
    if (sorted[i] != i) return std::nullopt;
  }
  if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
  return perm;
}

Result<SliceGeometry> slice_geometry(const Graph& graph, const Node& node) {
  std::vector<int64_t> in_shape = shape_of(graph, node.inputs.at(0));
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  // Opset 10+: starts, ends, axes, steps as constant inputs (opset 1's attributes as fallback).
  auto list = [&](size_t input, const char* attr) -> Result<std::vector<int64_t>> {
    if (node.inputs.size() > input && !node.inputs[input].empty()) {
      return constant_ints(graph, node, node.inputs[input], attr);
    }
    return node.attr_ints(attr, {});
  };
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, list(1, "starts"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ends, list(2, "ends"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, list(3, "axes"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> steps, list(4, "steps"));
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return inconsistent(node, "starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> begin(rank, 0), step(rank, 1), expected = in_shape;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t a, normalize_axis(node, axes[i], rank));
    if (seen[a]) return inconsistent(node, "axis " + std::to_string(a) + " repeated");
    seen[a] = true;
    const int64_t dim = in_shape[a], s = steps[i];
    if (s == 0) return inconsistent(node, "step 0");
    int64_t lo = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t hi = ends[i] < 0 ? ends[i] + dim : ends[i];
    // Clamping as the spec says: [0, dim] for positive steps, [-1, dim - 1] for negative.
    if (s > 0) {
      lo = std::clamp<int64_t>(lo, 0, dim);
      hi = std::clamp<int64_t>(hi, 0, dim);
    } else {
      lo = std::clamp<int64_t>(lo, 0, dim - 1);
      hi = std::clamp<int64_t>(hi, -1, dim - 1);
    }
    int64_t count = s > 0 ? (hi - lo + s - 1) / s : (lo - hi + (-s) - 1) / (-s);
    begin[a] = lo;
    step[a] = s;
    expected[a] = std::max<int64_t>(0, count);
  }
  KILN_RETURN_IF_ERROR(check_shape(node, expected, shape_of(graph, node.outputs.at(0))));
  SliceGeometry out;
  out.shape = expected;
  std::vector<int64_t> in_strides = row_major_strides(in_shape);
  for (int64_t d = 0; d < rank; ++d) {
    out.base += begin[d] * in_strides[d];
    out.strides.push_back(step[d] * in_strides[d]);
  }
  return out;
}

Result<ir::Program> lower_data_movement(const Graph& graph, const Node& node,
                                        const ops::TargetInfo& target) {
  const std::string& op = node.op_type;
  if (op != "Concat" && op != "Pad")
    KILN_RETURN_IF_ERROR(check_float(graph, node, node.inputs.at(0)));
  if (op == "Transpose") return lower_transpose(graph, node, target);
  if (op == "Concat") return lower_concat(graph, node, target);
  if (op == "Split") return lower_split(graph, node, target);
  if (op == "Slice") return lower_slice(graph, node, target);
  if (op == "Pad") return lower_pad(graph, node, target);
  if (op == "Gather") return lower_gather(graph, node, target);
  if (op == kStridedCopyOp) return lower_strided_copy(graph, node, target);
  return InternalError(node.describe() + " is not a data movement op");
}

ir::Program transpose_program(const std::vector<int64_t>& in_shape,
                              const std::vector<int64_t>& perm, const std::string& name) {
  std::vector<int64_t> out_shape;
  for (int64_t p : perm) out_shape.push_back(in_shape.at(p));
  ir::Buffer in("in", in_shape.empty() ? std::vector<int64_t>{1} : in_shape,
                ir::BufferScope::kArgument);
  ir::Buffer out("out", out_shape.empty() ? std::vector<int64_t>{1} : out_shape,
                 ir::BufferScope::kArgument);
  return make_program(name, {in}, {out},
                      transpose_stmt(in, out, in_shape, perm, ops::TargetInfo{}));
}

}  // namespace kiln::compiler
