#include "compiler/lowering_util.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "ops/conv_common.h"

namespace kiln::compiler {

using ir::Expr;
using ir::LoopKind;
using ir::Stmt;

namespace {

// With at least this many rows, every thread of a many-core machine gets some: columns are not
// split into blocks.
constexpr int64_t kRowsForThreads = 32;
// Columns per block when rows are few: 8 KiB of float32 per task, a multiple of every chunk.
constexpr int64_t kBlockColumns = 2048;
// A vector_span chunk is this many target vectors: independent SIMD operations per iteration.
constexpr int64_t kVectorsPerChunk = 4;

}  // namespace

Status unsupported(const frontend::Node& node, const std::string& what) {
  return UnimplementedError(node.describe() + ": not supported: " + what);
}

Status inconsistent(const frontend::Node& node, const std::string& what) {
  return InvalidArgument(node.describe() + ": " + what);
}

Result<int64_t> normalize_axis(const frontend::Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return inconsistent(
        node, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::string kernel_name(const frontend::Node& node) {
  std::string name;
  for (char c : node.op_type)
    name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name + "_" + std::to_string(node.index);
}

ir::Buffer tensor_buffer(const frontend::Graph& graph, const std::string& name) {
  std::vector<int64_t> shape = graph.tensor(name).shape;
  if (shape.empty()) shape = {1};
  return ir::Buffer(name, shape, ir::BufferScope::kArgument);
}

Status check_float(const frontend::Graph& graph, const frontend::Node& node,
                   const std::string& name) {
  const frontend::Tensor& t = graph.tensor(name);
  if (t.dtype != frontend::DType::kFloat32) {
    return unsupported(node, "tensor '" + name + "' is " + frontend::dtype_name(t.dtype) +
                                 ", kiln computes in float32");
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> constant_ints(const frontend::Graph& graph, const frontend::Node& node,
                                           const std::string& name, const std::string& what) {
  if (!graph.is_constant(name)) {
    return unsupported(node, what + " '" + name + "' is not a constant");
  }
  const frontend::Tensor& t = graph.tensor(name);
  if (static_cast<int64_t>(t.i64.size()) != t.num_elements()) {
    return unsupported(
        node, what + " '" + name + "' is " + frontend::dtype_name(t.dtype) + ", not int64");
  }
  return t.i64;
}

Result<std::vector<int64_t>> pad_amounts(const frontend::Graph& graph, const frontend::Node& node) {
  if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
    return constant_ints(graph, node, node.inputs[1], "pads");
  }
  return node.attr_ints("pads", {});
}

ir::Program make_program(const std::string& name, std::vector<ir::Buffer> inputs,
                         std::vector<ir::Buffer> outputs, Stmt body) {
  ir::Program program;
  program.name = name;
  program.num_inputs = static_cast<int>(inputs.size());
  program.num_outputs = static_cast<int>(outputs.size());
  program.buffers = std::move(inputs);
  for (ir::Buffer& b : outputs) program.buffers.push_back(std::move(b));
  program.stages = {{name, std::move(body), true}};
  return program;
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::vector<Expr> unfuse(const Expr& fused, const std::vector<int64_t>& dims) {
  std::vector<Expr> out(dims.size());
  int64_t inner = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    bool outermost = std::all_of(dims.begin(), dims.begin() + i, [](int64_t d) { return d == 1; });
    Expr x = inner == 1 ? fused : fused / Expr(inner);
    out[i] = dims[i] == 1 ? Expr(0) : outermost ? x : x % Expr(dims[i]);
    inner *= dims[i];
  }
  return out;
}

Stmt vector_span(const Expr& start, int64_t width, const ops::TargetInfo& target,
                 const ColumnBody& body) {
  const int64_t lanes = std::max(1, target.simd_lanes);
  const int64_t chunk = std::min(lanes * kVectorsPerChunk, ops::conv::kMaxSimdLanes);
  std::vector<Stmt> parts;
  const int64_t chunks = width / chunk;
  if (chunks > 0) {
    Expr o = ir::var("co"), v = ir::var("cv");
    parts.push_back(
        ir::For(o, chunks, LoopKind::kSerial,
                ir::For(v, chunk, LoopKind::kVectorized, body(start + o * Expr(chunk) + v))));
  }
  int64_t done = chunks * chunk;
  const int64_t whole = (width - done) / lanes * lanes;
  if (whole > 0) {
    Expr v = ir::var("wv");
    parts.push_back(ir::For(v, whole, LoopKind::kVectorized, body(start + Expr(done) + v)));
    done += whole;
  }
  if (width > done) {
    Expr v = ir::var("tv");
    parts.push_back(ir::For(v, width - done, LoopKind::kVectorized, body(start + Expr(done) + v)));
  }
  return parts.size() == 1 ? parts[0] : ir::Seq(std::move(parts));
}

Stmt parallel_blocks(int64_t rows, int64_t cols, const BlockBody& body, int64_t max_block) {
  std::vector<Stmt> parts;
  if (rows == 0 || cols == 0) return ir::Seq({});
  int64_t block = rows >= kRowsForThreads || cols <= kBlockColumns ? cols : kBlockColumns;
  block = std::max<int64_t>(1, std::min(block, max_block));
  const int64_t blocks = cols / block, tail = cols % block;
  {
    Expr f = ir::var("rb");
    Expr row = blocks == 1 ? f : f / Expr(blocks);
    Expr col0 = blocks == 1 ? Expr(0) : (f % Expr(blocks)) * Expr(block);
    parts.push_back(ir::For(f, rows * blocks, LoopKind::kParallel, body(row, col0, block)));
  }
  if (tail > 0) {
    Expr r = ir::var("rt");
    parts.push_back(ir::For(r, rows, LoopKind::kParallel, body(r, Expr(blocks * block), tail)));
  }
  return parts.size() == 1 ? parts[0] : ir::Seq(std::move(parts));
}

Stmt parallel_rows(int64_t rows, int64_t cols, const ops::TargetInfo& target,
                   const std::function<Stmt(const Expr& row, const Expr& col)>& body) {
  return parallel_blocks(rows, cols, [&](const Expr& row, const Expr& col0, int64_t width) {
    return vector_span(col0, width, target, [&](const Expr& col) { return body(row, col); });
  });
}

Stmt row_reduce(Combine combine, int64_t width, const ops::TargetInfo& target,
                const std::function<Expr(const Expr& col)>& value, const ir::Buffer& dst,
                const Expr& dst_index, const Expr& init) {
  auto op = [&](const Expr& a, const Expr& b) {
    return combine == Combine::kSum ? a + b : ir::max(a, b);
  };
  const int64_t lanes = std::max(1, target.simd_lanes);
  const int64_t chunk =
      std::max<int64_t>(1, std::min({width, lanes * kVectorsPerChunk, ops::conv::kMaxSimdLanes}));
  ir::Buffer acc("acc", {chunk}, ir::BufferScope::kLocal);
  std::vector<Stmt> parts;
  {
    Expr v = ir::var("av");
    Expr identity =
        combine == Combine::kSum ? ir::f32(0) : ir::f32(-std::numeric_limits<float>::infinity());
    parts.push_back(ir::For(v, chunk, LoopKind::kVectorized, ir::Store(acc, {v}, identity)));
  }
  const int64_t chunks = width / chunk, tail = width % chunk;
  if (chunks > 0) {
    Expr o = ir::var("ao"), v = ir::var("av");
    parts.push_back(
        ir::For(o, chunks, LoopKind::kSerial,
                ir::For(v, chunk, LoopKind::kVectorized,
                        ir::Store(acc, {v}, op(acc.load({v}), value(o * Expr(chunk) + v))))));
  }
  if (tail > 0) {
    Expr v = ir::var("at");
    parts.push_back(
        ir::For(v, tail, LoopKind::kVectorized,
                ir::Store(acc, {v}, op(acc.load({v}), value(Expr(chunks * chunk) + v)))));
  }
  // The partial results folded in halves, the upper part onto the lower, into a second buffer
  // and back: log2(chunk) vector steps rather than a chain of chunk dependent scalar ones (which
  // cost a 128-wide Softmax row more than its exps).
  ir::Buffer half_acc("acc_half", {std::max<int64_t>(1, chunk - chunk / 2)},
                      ir::BufferScope::kLocal);
  const ir::Buffer* from = &acc;
  const ir::Buffer* to = &half_acc;
  for (int64_t n = chunk; n > 1;) {
    const int64_t half = n / 2, upper = n - half;
    Expr v = ir::var("ah");
    // Every element of the lower part: the upper part's, with the middle one of an odd count
    // carried over as it is.
    std::vector<Stmt> fold = {
        ir::For(v, half, LoopKind::kVectorized,
                ir::Store(*to, {v}, op(from->load({v}), from->load({v + Expr(upper)}))))};
    if (upper > half) fold.push_back(ir::Store(*to, {Expr(half)}, from->load({Expr(half)})));
    parts.push_back(ir::Seq(std::move(fold)));
    std::swap(from, to);
    n = upper;
  }
  parts.push_back(ir::StoreFlat(dst, dst_index, op(init, from->load({Expr(0)}))));
  return ir::Allocate(acc, ir::Allocate(half_acc, ir::Seq(std::move(parts))));
}

}  // namespace kiln::compiler
