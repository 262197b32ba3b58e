// The kernels of compiler/op_lowering.h and compiler/elementwise.h against straightforward
// references computed here, on small odd shapes (SIMD tails, column blocks) and every attribute
// path the lowerings implement. Every program runs in the IR interpreter; those without math
// calls are also built with LLVM and run on a thread pool, and must agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "builder/build.h"
#include "compiler/elementwise.h"
#include "compiler/op_lowering.h"
#include "compiler/strided_copy_fusion.h"
#include "ir/interpreter.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"

namespace kiln {
namespace {

using compiler::ElementwiseGroup;
using frontend::DType;
using frontend::Graph;
using frontend::Node;
using Floats = std::vector<float>;
using Shape = std::vector<int64_t>;

// A hand-built graph.
struct TestGraph {
  Graph g;
  explicit TestGraph(int64_t opset = 13) {
    g.source = "test";
    g.opset = opset;
  }
  void data(const std::string& name, const Shape& shape) {
    frontend::Tensor& t = g.tensors[name];
    t.name = name;
    t.dtype = DType::kFloat32;
    t.shape = shape;
  }
  void floats(const std::string& name, const Shape& shape, const Floats& values) {
    data(name, shape);
    g.tensors[name].is_constant = true;
    g.tensors[name].f32 = values;
  }
  void ints(const std::string& name, const Shape& shape, const std::vector<int64_t>& values) {
    frontend::Tensor& t = g.tensors[name];
    t.name = name;
    t.dtype = DType::kInt64;
    t.shape = shape;
    t.is_constant = true;
    t.i64 = values;
  }
  const Node& node(const std::string& op, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs,
                   std::map<std::string, frontend::AttrValue> attrs = {}) {
    Node n;
    n.op_type = op;
    n.name = op + std::to_string(g.nodes.size());
    n.index = static_cast<int>(g.nodes.size());
    n.inputs = inputs;
    n.outputs = outputs;
    n.attrs = std::move(attrs);
    g.nodes.push_back(n);
    return g.nodes.back();
  }
};

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Floats random_floats(int64_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

bool has_calls(const ir::Program& p) {
  bool found = false;
  std::function<void(const ir::Expr&)> expr = [&](const ir::Expr& e) {
    if (!e.defined()) return;
    if (e->kind == ir::ExprKind::kCall) found = true;
    expr(e->a);
    expr(e->b);
    expr(e->c);
  };
  std::function<void(const ir::Stmt&)> stmt = [&](const ir::Stmt& s) {
    if (!s.defined()) return;
    expr(s->index);
    expr(s->value);
    expr(s->condition);
    stmt(s->then_case);
    stmt(s->else_case);
    stmt(s->body);
    for (const ir::Stmt& c : s->seq) stmt(c);
  };
  for (const ir::Stage& st : p.stages) stmt(st.body);
  return found;
}

// Runs `p` on `inputs` (one per input buffer) in the interpreter and, without math calls, as
// LLVM code on 3 threads; both must agree. Returns the output buffers (the interpreter's).
std::vector<Floats> run(const ir::Program& p, const std::vector<Floats>& inputs) {
  std::vector<Floats> bufs;
  EXPECT_EQ(static_cast<int>(inputs.size()), p.num_inputs);
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    int64_t n = p.buffers[i]->num_elements();
    if (i < inputs.size()) {
      EXPECT_EQ(static_cast<int64_t>(inputs[i].size()), n) << p.buffers[i]->name;
      bufs.push_back(inputs[i]);
      bufs.back().resize(n);
    } else {
      bufs.emplace_back(n, std::nanf(""));  // outputs must be written, not assumed zero
    }
  }
  std::vector<Floats> compiled = bufs;
  std::vector<float*> ptrs;
  for (Floats& b : bufs) ptrs.push_back(b.data());
  Status st = ir::interpret(p, ptrs);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!has_calls(p)) {
    auto built = builder::build_program(p, builder::host_target());
    EXPECT_TRUE(built.ok()) << built.status().message();
    if (built.ok()) {
      auto artifact = Artifact::load_from_bytes(built->shared_object, p.name);
      EXPECT_TRUE(artifact.ok()) << artifact.status().message();
      std::vector<float*> cptrs;
      for (Floats& b : compiled) cptrs.push_back(b.data());
      ThreadPool pool(3);
      for (const ir::Stage& s : p.stages) {
        auto fn = (*artifact)->stage(s.name);
        EXPECT_TRUE(fn.ok()) << s.name;
        if (fn.ok()) (*fn)(cptrs.data(), pool.api());
      }
      for (size_t i = inputs.size(); i < bufs.size(); ++i) {
        for (size_t j = 0; j < bufs[i].size(); ++j) {
          EXPECT_NEAR(compiled[i][j], bufs[i][j], 1e-5 + 1e-5 * std::fabs(bufs[i][j]))
              << "LLVM vs interpreter, " << p.buffers[i]->name << "[" << j << "]";
        }
      }
    }
  }
  return std::vector<Floats>(bufs.begin() + static_cast<long>(inputs.size()), bufs.end());
}

void expect_close(const Floats& got, const Floats& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    double tol = 1e-5 + 1e-4 * std::fabs(want[i]);
    bool ok = std::isinf(want[i]) ? got[i] == want[i] : std::fabs(got[i] - want[i]) <= tol;
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << ", want " << want[i];
    }
  }
}

// Lowers the graph's last node and runs it: its constant arguments get the graph's values, the
// others `inputs` in order. Returns its outputs.
std::vector<Floats> lower_and_run(const TestGraph& t, const std::vector<Floats>& inputs) {
  auto p = compiler::lower_node(t.g, t.g.nodes.back(), ops::TargetInfo{});
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return {};
  std::vector<Floats> args;
  size_t next = 0;
  for (int i = 0; i < p->num_inputs; ++i) {
    const frontend::Tensor& tensor = t.g.tensor(p->buffers[i]->name);
    if (tensor.is_constant) {
      args.push_back(tensor.f32);
    } else {
      EXPECT_LT(next, inputs.size()) << "too few inputs for " << p->name;
      args.push_back(next < inputs.size() ? inputs[next++] : Floats());
    }
  }
  EXPECT_EQ(next, inputs.size()) << "unused inputs for " << p->name;
  return run(*p, args);
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Coordinates of flat index `i` in `shape`.
std::vector<int64_t> coords_of(int64_t i, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

// Numpy broadcasting: element of `in` (shape `s`) read at output coordinates `oc`.
float bcast(const Floats& in, const Shape& s, const std::vector<int64_t>& oc) {
  int64_t flat = 0;
  size_t lead = oc.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + (s[d] == 1 ? 0 : oc[lead + d]);
  return in[flat];
}

// ------------------------------------------------------------------------------------------
// Elementwise.

struct UnaryCase {
  std::string op;
  std::map<std::string, frontend::AttrValue> attrs;
  std::function<double(double)> ref;
  float lo = -3, hi = 3;
};

TEST(CompilerElementwise, UnaryOps) {
  const Shape shape = {3, 5, 7};
  std::vector<UnaryCase> cases = {
      {"Relu", {}, [](double x) { return std::max(x, 0.0); }},
      {"LeakyRelu", {{"alpha", 0.3f}}, [](double x) { return x < 0 ? 0.3 * x : x; }},
      {"LeakyRelu", {}, [](double x) { return x < 0 ? 0.01 * x : x; }},
      {"HardSigmoid", {}, [](double x) { return std::clamp(0.2 * x + 0.5, 0.0, 1.0); }},
      {"HardSigmoid",
       {{"alpha", 0.5f}, {"beta", 0.25f}},
       [](double x) { return std::clamp(0.5 * x + 0.25, 0.0, 1.0); }},
      {"HardSwish", {}, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }, -5, 5},
      {"Neg", {}, [](double x) { return -x; }},
      {"Reciprocal", {}, [](double x) { return 1 / x; }, 0.5, 3},
      {"Sigmoid", {}, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Tanh", {}, [](double x) { return std::tanh(x); }},
      {"Erf", {}, [](double x) { return std::erf(x); }},
      {"Exp", {}, [](double x) { return std::exp(x); }},
      {"Sqrt", {}, [](double x) { return std::sqrt(x); }, 0, 4},
      {"Abs", {}, [](double x) { return std::fabs(x); }},
  };
  for (const UnaryCase& c : cases) {
    TestGraph t;
    t.data("x", shape);
    t.data("y", shape);
    t.node(c.op, {"x"}, {"y"}, c.attrs);
    Floats x = random_floats(count(shape), 1, c.lo, c.hi);
    Floats want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = static_cast<float>(c.ref(x[i]));
    auto out = lower_and_run(t, {x});
    ASSERT_EQ(out.size(), 1u) << c.op;
    expect_close(out[0], want, c.op);
  }
}

TEST(CompilerElementwise, ClipBounds) {
  const Shape shape = {4, 9};
  Floats x = random_floats(count(shape), 2);
  auto check = [&](TestGraph& t, const std::vector<Floats>& inputs, double lo, double hi) {
    Floats want(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      want[i] = static_cast<float>(std::clamp<double>(x[i], lo, hi));
    auto out = lower_and_run(t, inputs);
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], want, "clip");
  };
  const double inf = std::numeric_limits<double>::infinity();
  {  // constant bounds are folded: no buffers for them
    TestGraph t;
    t.data("x", shape);
    t.data("y", shape);
    t.floats("lo", {}, {-0.5f});
    t.floats("hi", {}, {1.25f});
    t.node("Clip", {"x", "lo", "hi"}, {"y"});
    ElementwiseGroup g{{&t.g.nodes[0]}};
    EXPECT_EQ(compiler::external_inputs(t.g, g), std::vector<std::string>{"x"});
    check(t, {x}, -0.5, 1.25);
  }
  {  // max only
    TestGraph t;
    t.data("x", shape);
    t.data("y", shape);
    t.floats("hi", {}, {0.5f});
    t.node("Clip", {"x", "", "hi"}, {"y"});
    check(t, {x}, -inf, 0.5);
  }
  {  // no bounds
    TestGraph t;
    t.data("x", shape);
    t.data("y", shape);
    t.node("Clip", {"x"}, {"y"});
    check(t, {x}, -inf, inf);
  }
  {  // a computed min is a buffer
    TestGraph t;
    t.data("x", shape);
    t.data("y", shape);
    t.data("lo", {});
    t.node("Clip", {"x", "lo"}, {"y"});
    ElementwiseGroup g{{&t.g.nodes[0]}};
    EXPECT_EQ(compiler::external_inputs(t.g, g), (std::vector<std::string>{"x", "lo"}));
    check(t, {x, {0.25f}}, 0.25, inf);
  }
}

TEST(CompilerElementwise, BinaryBroadcasting) {
  struct Case {
    std::string op;
    Shape a, b, out;
    std::function<double(double, double)> ref;
  };
  std::vector<Case> cases = {
      {"Add", {2, 3, 5, 7}, {3, 1, 7}, {2, 3, 5, 7}, [](double a, double b) { return a + b; }},
      {"Sub", {5, 1}, {1, 9}, {5, 9}, [](double a, double b) { return a - b; }},
      {"Mul", {1, 4, 1, 3}, {2, 1, 5, 1}, {2, 4, 5, 3}, [](double a, double b) { return a * b; }},
      {"Div", {3, 37}, {37}, {3, 37}, [](double a, double b) { return a / b; }},
      {"Max", {6, 5}, {6, 1}, {6, 5}, [](double a, double b) { return std::max(a, b); }},
      {"Min", {1}, {4, 3}, {4, 3}, [](double a, double b) { return std::min(a, b); }},
      {"Pow", {3, 11}, {11}, {3, 11}, [](double a, double b) { return std::pow(a, b); }},
      {"Add", {2, 4099}, {2, 4099}, {2, 4099}, [](double a, double b) { return a + b; }},
  };
  for (const Case& c : cases) {
    TestGraph t;
    t.data("a", c.a);
    t.data("b", c.b);
    t.data("y", c.out);
    t.node(c.op, {"a", "b"}, {"y"});
    float lo = c.op == "Pow" ? 0.1f : -2;
    Floats a = random_floats(count(c.a), 3, lo, 2), b = random_floats(count(c.b), 4, 0.5, 2);
    Floats want(count(c.out));
    for (int64_t i = 0; i < count(c.out); ++i) {
      auto oc = coords_of(i, c.out);
      want[i] = static_cast<float>(c.ref(bcast(a, c.a, oc), bcast(b, c.b, oc)));
    }
    auto out = lower_and_run(t, {a, b});
    ASSERT_EQ(out.size(), 1u) << c.op;
    expect_close(out[0], want,
                 c.op + " " + frontend::dims_text(c.a) + " " + frontend::dims_text(c.b));
  }
}

TEST(CompilerElementwise, VariadicMaxAndConstantExponents) {
  {
    TestGraph t;
    const Shape s = {3, 7};
    t.data("a", s);
    t.data("b", {7});
    t.data("c", {3, 1});
    t.data("y", s);
    t.node("Max", {"a", "b", "c"}, {"y"});
    Floats a = random_floats(21, 5), b = random_floats(7, 6), c = random_floats(3, 7);
    Floats want(21);
    for (int64_t i = 0; i < 21; ++i) {
      want[i] = std::max({a[i], b[i % 7], c[i / 7]});
    }
    expect_close(lower_and_run(t, {a, b, c}).at(0), want, "Max3");
  }
  for (float e : {2.0f, 3.0f, 0.5f, 1.0f, -1.0f, 1.5f}) {
    TestGraph t;
    t.data("x", {2, 13});
    t.data("y", {2, 13});
    t.floats("e", {}, {e});
    t.node("Pow", {"x", "e"}, {"y"});
    Floats x = random_floats(26, 8, 0.1f, 3);
    Floats want(26);
    for (int i = 0; i < 26; ++i) want[i] = static_cast<float>(std::pow(double(x[i]), double(e)));
    expect_close(lower_and_run(t, {x}).at(0), want, "Pow " + std::to_string(e));
  }
}

TEST(CompilerElementwise, BatchNormalization) {
  const Shape s = {2, 3, 5, 7};
  TestGraph t;
  t.data("x", s);
  t.data("y", s);
  t.floats("scale", {3}, {0.5f, 2.0f, -1.0f});
  t.floats("bias", {3}, {0.1f, -0.2f, 0.3f});
  t.floats("mean", {3}, {0.0f, 1.0f, -0.5f});
  t.floats("var", {3}, {1.0f, 0.25f, 4.0f});
  t.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, {{"epsilon", 0.01f}});
  Floats x = random_floats(count(s), 9);
  const Floats& sc = t.g.tensors["scale"].f32;
  const Floats& b = t.g.tensors["bias"].f32;
  const Floats& m = t.g.tensors["mean"].f32;
  const Floats& v = t.g.tensors["var"].f32;
  Floats want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t c = (i / 35) % 3;
    want[i] = static_cast<float>((x[i] - m[c]) / std::sqrt(v[c] + 0.01) * sc[c] + b[c]);
  }
  ElementwiseGroup g{{&t.g.nodes[0]}};
  EXPECT_EQ(compiler::external_inputs(t.g, g),
            (std::vector<std::string>{"x", "scale", "bias", "mean", "var"}));
  expect_close(lower_and_run(t, {x}).at(0), want, "BatchNormalization");
}

// lower_node keeps op_lowering.h's contract for elementwise nodes too: one argument per data
// input, even a folded constant or a repeated tensor.
TEST(CompilerElementwise, LowerNodeTakesEveryDataInput) {
  TestGraph t;
  t.data("x", {3, 5});
  t.data("y", {3, 5});
  t.data("z", {3, 5});
  t.floats("two", {}, {2.0f});
  t.node("Add", {"x", "x"}, {"y"});
  t.node("Mul", {"two", "y"}, {"z"});
  Floats x = random_floats(15, 30);
  Floats twice(15), four(15);
  for (int i = 0; i < 15; ++i) {
    twice[i] = x[i] + x[i];
    four[i] = 2 * twice[i];
  }
  auto add = compiler::lower_node(t.g, t.g.nodes[0], ops::TargetInfo{});
  ASSERT_TRUE(add.ok()) << add.status().message();
  EXPECT_EQ(add->num_inputs, 2);
  expect_close(run(*add, {x, x}).at(0), twice, "Add(x, x)");
  auto mul = compiler::lower_node(t.g, t.g.nodes[1], ops::TargetInfo{});
  ASSERT_TRUE(mul.ok()) << mul.status().message();
  EXPECT_EQ(mul->num_inputs, 2);
  expect_close(run(*mul, {{2.0f}, twice}).at(0), four, "Mul(2, y)");
}

// A chain BN -> Add(residual) -> Relu -> Mul(scalar) as one group, through the standalone
// kernel and through group_value with per-dimension loads (the fused write-back's path).
TEST(CompilerElementwise, GroupChainAndGroupValue) {
  const Shape s = {2, 3, 4, 5};
  TestGraph t;
  t.data("x", s);
  t.data("res", s);
  t.data("bn", s);
  t.data("sum", s);
  t.data("act", s);
  t.data("y", s);
  t.floats("scale", {3}, {1.5f, 0.5f, -1.0f});
  t.floats("bias", {3}, {0.0f, 0.25f, 1.0f});
  t.floats("mean", {3}, {0.1f, 0.2f, 0.3f});
  t.floats("var", {3}, {1.0f, 2.0f, 0.5f});
  t.floats("half", {1}, {0.5f});
  t.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"bn"});
  t.node("Add", {"bn", "res"}, {"sum"});
  t.node("Relu", {"sum"}, {"act"});
  t.node("Mul", {"act", "half"}, {"y"});
  ElementwiseGroup g;
  for (const Node& n : t.g.nodes) g.nodes.push_back(&n);
  EXPECT_EQ(g.output(), "y");
  std::vector<std::string> ext = compiler::external_inputs(t.g, g);
  EXPECT_EQ(ext, (std::vector<std::string>{"x", "scale", "bias", "mean", "var", "res"}));

  Floats x = random_floats(count(s), 10), res = random_floats(count(s), 11);
  std::map<std::string, Floats> values = {{"x", x},
                                          {"res", res},
                                          {"scale", t.g.tensors["scale"].f32},
                                          {"bias", t.g.tensors["bias"].f32},
                                          {"mean", t.g.tensors["mean"].f32},
                                          {"var", t.g.tensors["var"].f32}};
  Floats want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t c = (i / 20) % 3;
    double bn =
        (x[i] - values["mean"][c]) / std::sqrt(values["var"][c] + 1e-5) * values["scale"][c] +
        values["bias"][c];
    want[i] = static_cast<float>(std::max(bn + res[i], 0.0) * 0.5);
  }
  std::vector<Floats> inputs;
  for (const std::string& name : ext) inputs.push_back(values[name]);
  auto p = compiler::lower_elementwise_group(t.g, g, ops::TargetInfo{8});
  ASSERT_TRUE(p.ok()) << p.status().message();
  expect_close(run(*p, inputs).at(0), want, "group kernel");

  // group_value: a plain loop nest over the output's dimensions, loads by coordinates.
  std::map<std::string, ir::Buffer> buffers;
  std::vector<ir::Buffer> args;
  for (const std::string& name : ext) {
    buffers[name] = ir::Buffer(name, t.g.tensor(name).shape, ir::BufferScope::kArgument);
    args.push_back(buffers[name]);
  }
  ir::Buffer out("y", s, ir::BufferScope::kArgument);
  std::vector<ir::Expr> idx;
  std::vector<ir::LoopSpec> loops;
  for (size_t d = 0; d < s.size(); ++d) {
    idx.push_back(ir::var("i" + std::to_string(d)));
    loops.push_back({idx.back(), s[d]});
  }
  std::vector<std::string> loaded;
  auto value = compiler::group_value(t.g, g, idx,
                                     [&](const std::string& name, const std::vector<ir::Expr>& at) {
                                       loaded.push_back(name);
                                       EXPECT_EQ(at.size(), t.g.tensor(name).shape.size()) << name;
                                       return buffers.at(name).load(at);
                                     });
  ASSERT_TRUE(value.ok()) << value.status().message();
  for (const std::string& name : loaded) {
    EXPECT_TRUE(buffers.count(name)) << "loaded a tensor that is not external: " << name;
  }
  ir::Program manual;
  manual.name = "manual";
  manual.buffers = args;
  manual.buffers.push_back(out);
  manual.num_inputs = static_cast<int>(args.size());
  manual.num_outputs = 1;
  manual.stages = {{"manual", ir::LoopNest(loops, ir::Store(out, idx, *value)), true}};
  expect_close(run(manual, inputs).at(0), want, "group_value");
}

// ------------------------------------------------------------------------------------------
// Pooling.

struct PoolCase {
  std::string op;
  Shape in;
  Shape kernel, strides, pads, dilations;
  std::string auto_pad = "NOTSET";
  int ceil_mode = 0, count_include_pad = 0;
};

// Output size and begin pad of one axis as ONNX defines them (ceil mode drops a last window
// starting in the end padding).
void pool_axis(const PoolCase& c, size_t d, int64_t* out, int64_t* pb, int64_t* pe) {
  size_t sp = c.kernel.size();
  int64_t in = c.in[2 + d], k = c.kernel[d];
  int64_t s = c.strides.empty() ? 1 : c.strides[d];
  int64_t dil = c.dilations.empty() ? 1 : c.dilations[d];
  int64_t span = (k - 1) * dil + 1;
  *pb = c.pads.empty() || c.auto_pad == "VALID" ? 0 : c.pads[d];
  *pe = c.pads.empty() || c.auto_pad == "VALID" ? 0 : c.pads[sp + d];
  if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
    *out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (*out - 1) * s + span - in);
    *pb = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    *pe = total - *pb;
    return;
  }
  int64_t num = in + *pb + *pe - span;
  *out = (c.ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (c.ceil_mode && (*out - 1) * s >= in + *pb) --*out;
}

TEST(CompilerPool, MaxAndAveragePool) {
  std::vector<PoolCase> cases = {
      {"MaxPool", {1, 3, 7, 9}, {2, 2}, {}, {}, {}},
      {"MaxPool", {2, 2, 9, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
      {"MaxPool", {1, 2, 8, 37}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {}},
      {"MaxPool", {1, 2, 9, 10}, {2, 2}, {1, 1}, {}, {2, 2}},
      {"MaxPool", {1, 1, 10, 10}, {3, 3}, {2, 2}, {}, {}, "NOTSET", 1},
      {"MaxPool", {1, 2, 7, 8}, {3, 3}, {2, 2}, {}, {}, "SAME_UPPER"},
      {"MaxPool", {1, 2, 7, 8}, {2, 2}, {1, 1}, {}, {}, "SAME_LOWER"},
      {"MaxPool", {1, 2, 7, 8}, {3, 2}, {1, 3}, {0, 1, 2, 0}, {}, "VALID"},
      {"MaxPool", {2, 3, 19}, {3}, {2}, {1, 1}, {}},
      {"AveragePool", {1, 3, 7, 9}, {2, 2}, {}, {}, {}},
      {"AveragePool", {1, 2, 9, 37}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {}},
      {"AveragePool", {1, 2, 9, 37}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {}, "NOTSET", 0, 1},
      {"AveragePool", {1, 2, 5, 5}, {5, 5}, {3, 3}, {2, 2, 2, 2}, {}, "NOTSET", 0, 1},
      {"AveragePool", {1, 1, 4, 4}, {3, 3}, {2, 2}, {}, {}, "NOTSET", 1},
      {"AveragePool", {1, 1, 10, 9}, {3, 3}, {2, 2}, {1, 0, 0, 1}, {}, "NOTSET", 1, 1},
      {"AveragePool", {1, 2, 7, 8}, {3, 3}, {2, 2}, {}, {}, "SAME_UPPER"},
      {"AveragePool", {1, 2, 7, 8}, {2, 2}, {1, 1}, {}, {}, "SAME_LOWER"},
      {"AveragePool", {2, 3, 23}, {4}, {3}, {1, 2}, {}},
  };
  for (const PoolCase& c : cases) {
    const size_t sp = c.kernel.size();
    std::vector<int64_t> outs(sp), pbs(sp), pes(sp);
    for (size_t d = 0; d < sp; ++d) pool_axis(c, d, &outs[d], &pbs[d], &pes[d]);
    Shape out_shape = {c.in[0], c.in[1]};
    out_shape.insert(out_shape.end(), outs.begin(), outs.end());
    TestGraph t;
    t.data("x", c.in);
    t.data("y", out_shape);
    std::map<std::string, frontend::AttrValue> attrs = {{"kernel_shape", c.kernel}};
    if (!c.strides.empty()) attrs["strides"] = c.strides;
    if (!c.pads.empty()) attrs["pads"] = c.pads;
    if (!c.dilations.empty()) attrs["dilations"] = c.dilations;
    if (c.auto_pad != "NOTSET") attrs["auto_pad"] = c.auto_pad;
    if (c.ceil_mode) attrs["ceil_mode"] = int64_t{1};
    if (c.count_include_pad) attrs["count_include_pad"] = int64_t{1};
    t.node(c.op, {"x"}, {"y"}, attrs);
    Floats x = random_floats(count(c.in), 12);
    // Reference: 1-D treated as H = 1.
    const bool one_d = sp == 1;
    const int64_t H = one_d ? 1 : c.in[2], W = c.in.back();
    const int64_t OH = one_d ? 1 : outs[0], OW = outs.back();
    auto axis = [&](size_t d, bool h) {
      struct A {
        int64_t k, s, dil, pb, pe;
      };
      if (one_d && h) return A{1, 1, 1, 0, 0};
      size_t i = one_d ? 0 : d;
      return A{c.kernel[i], c.strides.empty() ? 1 : c.strides[i],
               c.dilations.empty() ? 1 : c.dilations[i], pbs[i], pes[i]};
    };
    auto ah = axis(0, true), aw = axis(1, false);
    Floats want(count(out_shape));
    for (int64_t p = 0; p < c.in[0] * c.in[1]; ++p) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          double mx = -INFINITY, sum = 0;
          int64_t n = 0, n_pad = 0;
          for (int64_t kh = 0; kh < ah.k; ++kh) {
            for (int64_t kw = 0; kw < aw.k; ++kw) {
              int64_t ih = oh * ah.s - ah.pb + kh * ah.dil, iw = ow * aw.s - aw.pb + kw * aw.dil;
              bool in_pads = ih < H + ah.pe && iw < W + aw.pe;
              n_pad += in_pads;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              float v = x[(p * H + ih) * W + iw];
              mx = std::max<double>(mx, v);
              sum += v;
              ++n;
            }
          }
          double r = c.op == "MaxPool" ? mx : sum / (c.count_include_pad ? n_pad : n);
          want[(p * OH + oh) * OW + ow] = static_cast<float>(r);
        }
      }
    }
    auto out = lower_and_run(t, {x});
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], want,
                 c.op + " in " + frontend::dims_text(c.in) + " out " +
                     frontend::dims_text(out_shape) + " " + c.auto_pad);
  }
}

TEST(CompilerPool, GlobalAveragePool) {
  for (Shape s : {Shape{2, 3, 5, 7}, Shape{1, 4, 33, 35}, Shape{3, 2, 9}}) {
    TestGraph t;
    t.data("x", s);
    Shape o(s.size(), 1);
    o[0] = s[0];
    o[1] = s[1];
    t.data("y", o);
    t.node("GlobalAveragePool", {"x"}, {"y"});
    Floats x = random_floats(count(s), 13);
    int64_t plane = count(s) / (s[0] * s[1]);
    Floats want(s[0] * s[1]);
    for (int64_t p = 0; p < s[0] * s[1]; ++p) {
      double acc = 0;
      for (int64_t i = 0; i < plane; ++i) acc += x[p * plane + i];
      want[p] = static_cast<float>(acc / plane);
    }
    expect_close(lower_and_run(t, {x}).at(0), want, "GlobalAveragePool " + frontend::dims_text(s));
  }
}

TEST(CompilerPool, RejectsWhatItCannotCompute) {
  TestGraph t;
  t.data("x", {1, 1, 4, 4, 4});
  t.data("y", {1, 1, 3, 3, 3});
  t.node("MaxPool", {"x"}, {"y"}, {{"kernel_shape", Shape{2, 2, 2}}});
  auto p = compiler::lower_node(t.g, t.g.nodes.back(), ops::TargetInfo{});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(p.status().message().find("MaxPool"), std::string::npos) << p.status().message();

  TestGraph bad;  // output larger than any window placement allows
  bad.data("x", {1, 1, 4, 4});
  bad.data("y", {1, 1, 9, 9});
  bad.node("AveragePool", {"x"}, {"y"}, {{"kernel_shape", Shape{2, 2}}});
  auto q = compiler::lower_node(bad.g, bad.g.nodes.back(), ops::TargetInfo{});
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------------------------------
// Reductions.

// Sum (or mean) of x (shape s) over `axes` into the kept coordinates, keepdims layout.
Floats reduce_ref(const Floats& x, const Shape& s, const std::vector<int64_t>& axes, bool mean) {
  Shape o = s;
  for (int64_t a : axes) o[a] = 1;
  std::vector<double> acc(count(o), 0);
  for (int64_t i = 0; i < count(s); ++i) {
    auto c = coords_of(i, s);
    for (int64_t a : axes) c[a] = 0;
    int64_t f = 0;
    for (size_t d = 0; d < s.size(); ++d) f = f * o[d] + c[d];
    acc[f] += x[i];
  }
  int64_t n = count(s) / count(o);
  Floats out(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(mean ? acc[i] / n : acc[i]);
  return out;
}

TEST(CompilerReduce, SumAndMeanOverAxes) {
  struct Case {
    std::string op;
    Shape in;
    std::vector<int64_t> axes;  // as given (may be negative); empty = default
    std::vector<int64_t> normalized;
    int keepdims = 1;
    bool axes_as_input = false;
    int64_t opset = 13;
  };
  std::vector<Case> cases = {
      {"ReduceSum", {3, 4, 5}, {1}, {1}, 1, true},
      {"ReduceSum", {3, 4, 5}, {0, 2}, {0, 2}, 0, true},
      {"ReduceSum", {3, 4, 67}, {-1}, {2}, 1, true},
      {"ReduceSum", {3, 4, 5}, {}, {0, 1, 2}, 1, true},
      {"ReduceSum", {2, 5, 3}, {1}, {1}, 0, false, 11},
      {"ReduceMean", {3, 4, 5}, {1}, {1}, 1},
      {"ReduceMean", {2, 3, 7, 9}, {2, 3}, {2, 3}, 1},
      {"ReduceMean", {2, 3, 7, 9}, {0, 1}, {0, 1}, 0},
      {"ReduceMean", {3, 2, 3100}, {0}, {0}, 1},
      {"ReduceMean", {3, 4, 5}, {-2}, {1}, 1},
      {"ReduceMean", {3, 4, 5}, {}, {0, 1, 2}, 0},
  };
  for (const Case& c : cases) {
    TestGraph t(c.opset);
    t.data("x", c.in);
    Shape o;
    for (int64_t d = 0; d < static_cast<int64_t>(c.in.size()); ++d) {
      bool r = std::count(c.normalized.begin(), c.normalized.end(), d) > 0;
      if (!r) o.push_back(c.in[d]);
      if (r && c.keepdims) o.push_back(1);
    }
    t.data("y", o);
    std::map<std::string, frontend::AttrValue> attrs = {{"keepdims", int64_t{c.keepdims}}};
    std::vector<std::string> inputs = {"x"};
    if (c.axes_as_input) {
      t.ints("axes", {static_cast<int64_t>(c.axes.size())}, c.axes);
      inputs.push_back("axes");
    } else if (!c.axes.empty()) {
      attrs["axes"] = c.axes;
    }
    t.node(c.op, inputs, {"y"}, attrs);
    Floats x = random_floats(count(c.in), 14);
    Floats want = reduce_ref(x, c.in, c.normalized, c.op == "ReduceMean");
    expect_close(lower_and_run(t, {x}).at(0), want,
                 c.op + " " + frontend::dims_text(c.in) + " axes " + std::to_string(c.axes.size()));
  }
}

TEST(CompilerReduce, EmptyAxesNoop) {
  TestGraph t;
  t.data("x", {3, 5});
  t.data("y", {3, 5});
  t.ints("axes", {0}, {});
  t.node("ReduceSum", {"x", "axes"}, {"y"}, {{"noop_with_empty_axes", int64_t{1}}});
  Floats x = random_floats(15, 15);
  expect_close(lower_and_run(t, {x}).at(0), x, "noop");
}

// ------------------------------------------------------------------------------------------
// Softmax and LayerNormalization (math calls: interpreter only).

TEST(CompilerSoftmax, AlongAxisAndFlattened) {
  struct Case {
    Shape s;
    int64_t axis;
    int64_t opset;
  };
  for (const Case& c : std::vector<Case>{{{3, 4, 5}, -1, 13},
                                         {{3, 4, 5}, 0, 13},
                                         {{3, 4, 5}, 1, 13},
                                         {{3, 4, 70}, 2, 13},
                                         {{3, 4, 5}, 1, 11},
                                         {{2, 3, 4}, 0, 12}}) {
    TestGraph t(c.opset);
    t.data("x", c.s);
    t.data("y", c.s);
    t.node("Softmax", {"x"}, {"y"}, {{"axis", c.axis}});
    Floats x = random_floats(count(c.s), 16, -50, 50);  // large values: must subtract the max
    int64_t axis = c.axis < 0 ? c.axis + 3 : c.axis;
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < 3; ++d) (d < axis ? outer : d == axis ? n : inner) *= c.s[d];
    if (c.opset < 13) {
      n *= inner;
      inner = 1;
    }
    Floats want(x.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        double mx = -INFINITY, sum = 0;
        for (int64_t a = 0; a < n; ++a) mx = std::max<double>(mx, x[(o * n + a) * inner + j]);
        for (int64_t a = 0; a < n; ++a) sum += std::exp(x[(o * n + a) * inner + j] - mx);
        for (int64_t a = 0; a < n; ++a) {
          int64_t i = (o * n + a) * inner + j;
          want[i] = static_cast<float>(std::exp(x[i] - mx) / sum);
        }
      }
    }
    expect_close(lower_and_run(t, {x}).at(0), want,
                 "Softmax axis " + std::to_string(c.axis) + " opset " + std::to_string(c.opset));
  }
}

TEST(CompilerLayerNorm, AxesBiasAndStatistics) {
  struct Case {
    Shape s;
    int64_t axis;
    bool bias, stats;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 17}, -1, true, false},
                                         {{2, 3, 17}, 1, false, true},
                                         {{4, 70}, 0, true, true},
                                         {{3, 5}, -1, true, true}}) {
    TestGraph t(17);
    const int64_t rank = static_cast<int64_t>(c.s.size());
    const int64_t axis = c.axis < 0 ? c.axis + rank : c.axis;
    Shape norm(c.s.begin() + axis, c.s.end()), stat_shape = c.s;
    for (int64_t d = axis; d < rank; ++d) stat_shape[d] = 1;
    const int64_t n = count(norm), rows = count(c.s) / n;
    t.data("x", c.s);
    t.data("y", c.s);
    t.floats("w", norm, random_floats(n, 17));
    std::vector<std::string> inputs = {"x", "w"};
    if (c.bias) {
      t.floats("b", norm, random_floats(n, 18));
      inputs.push_back("b");
    }
    std::vector<std::string> outputs = {"y"};
    if (c.stats) {
      t.data("mean", stat_shape);
      t.data("inv", stat_shape);
      outputs = {"y", "mean", "inv"};
    }
    t.node("LayerNormalization", inputs, outputs, {{"axis", c.axis}, {"epsilon", 1e-3f}});
    Floats x = random_floats(count(c.s), 19);
    const Floats& w = t.g.tensors["w"].f32;
    Floats b = c.bias ? t.g.tensors["b"].f32 : Floats(n, 0);
    Floats want(x.size()), want_mean(rows), want_inv(rows);
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < n; ++i) mean += x[r * n + i];
      mean /= n;
      for (int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
      double inv = 1 / std::sqrt(var / n + 1e-3);
      for (int64_t i = 0; i < n; ++i) {
        want[r * n + i] = static_cast<float>((x[r * n + i] - mean) * inv * w[i] + b[i]);
      }
      want_mean[r] = static_cast<float>(mean);
      want_inv[r] = static_cast<float>(inv);
    }
    auto out = lower_and_run(t, {x});
    ASSERT_EQ(out.size(), c.stats ? 3u : 1u);
    expect_close(out[0], want, "LayerNormalization");
    if (c.stats) {
      expect_close(out[1], want_mean, "Mean");
      expect_close(out[2], want_inv, "InvStdDev");
    }
  }
}

// ------------------------------------------------------------------------------------------
// Data movement.

// out[o] = in[source(o)] for every output coordinate.
Floats gather_ref(const Shape& out_shape, const Floats& in, const Shape& in_shape,
                  const std::function<std::vector<int64_t>(const std::vector<int64_t>&)>& source) {
  Floats out(count(out_shape));
  auto st = strides_of(in_shape);
  for (int64_t i = 0; i < count(out_shape); ++i) {
    auto src = source(coords_of(i, out_shape));
    int64_t f = 0;
    for (size_t d = 0; d < src.size(); ++d) f += src[d] * st[d];
    out[i] = in[f];
  }
  return out;
}

TEST(CompilerDataMovement, Transpose) {
  const Shape s = {2, 3, 5, 7};
  Floats x = random_floats(count(s), 20);
  for (Shape perm : {Shape{0, 1, 3, 2}, Shape{3, 2, 1, 0}, Shape{1, 0, 2, 3}, Shape{0, 2, 3, 1},
                     Shape{2, 0, 3, 1}, Shape{}}) {
    Shape p = perm.empty() ? Shape{3, 2, 1, 0} : perm;
    Shape o;
    for (int64_t d : p) o.push_back(s[d]);
    TestGraph t;
    t.data("x", s);
    t.data("y", o);
    std::map<std::string, frontend::AttrValue> attrs;
    if (!perm.empty()) attrs["perm"] = perm;
    t.node("Transpose", {"x"}, {"y"}, attrs);
    Floats want = gather_ref(o, x, s, [&](const std::vector<int64_t>& oc) {
      std::vector<int64_t> ic(4);
      for (size_t i = 0; i < 4; ++i) ic[p[i]] = oc[i];
      return ic;
    });
    expect_close(lower_and_run(t, {x}).at(0), want, "Transpose " + frontend::dims_text(p));
    auto prog = compiler::transpose_program(s, p, "transpose_" + std::to_string(p[0]));
    expect_close(run(prog, {x}).at(0), want, "transpose_program");
  }
}

// Which Transposes keep their input's elements in order, and so compile to a view.
TEST(CompilerDataMovement, OrderPreservingTranspose) {
  struct Case {
    Shape in, perm, out;
    bool view;
  };
  for (const Case& c : std::vector<Case>{
           {{1, 128, 256}, {1, 0, 2}, {128, 1, 256}, true},   // BERT's, into the projection
           {{128, 1, 256}, {1, 0, 2}, {1, 128, 256}, true},   // and back
           {{4, 1, 1, 8}, {1, 0, 3, 2}, {1, 4, 8, 1}, true},  // ones moved on both sides
           {{2, 3}, {0, 1}, {2, 3}, true},                    // the identity
           {{128, 4, 64}, {1, 0, 2}, {4, 128, 64}, false},    // heads: elements move
           {{1, 4, 8}, {0, 2, 1}, {1, 8, 4}, false},
           {{2, 3}, {}, {3, 2}, false},               // default: reversed
           {{1, 4, 8}, {1, 0, 2}, {4, 8, 1}, false},  // an output shape that does not follow
           {{1, 4, 8}, {1, 1, 2}, {4, 4, 8}, false},  // not a permutation
           {{1, 4, 8}, {1, 0}, {4, 1}, false}}) {     // too short
    TestGraph t;
    t.data("x", c.in);
    t.data("y", c.out);
    std::map<std::string, frontend::AttrValue> attrs;
    if (!c.perm.empty()) attrs["perm"] = c.perm;
    const Node& n = t.node("Transpose", {"x"}, {"y"}, attrs);
    EXPECT_EQ(compiler::is_order_preserving_transpose(t.g, n), c.view)
        << frontend::dims_text(c.in) << " perm " << frontend::dims_text(c.perm);
  }
  TestGraph t;
  t.data("x", {1, 4});
  t.data("y", {1, 4});
  EXPECT_FALSE(compiler::is_order_preserving_transpose(t.g, t.node("Relu", {"x"}, {"y"})));
}

// kiln's StridedCopy (compiler/strided_copy_fusion.h): out[o] = in[base + sum o_d * strides_d],
// and a copy whose strides reach outside its input is refused, naming the elements.
TEST(CompilerDataMovement, StridedCopy) {
  Floats x = random_floats(6 * 24, 24);
  auto graph = [](int64_t base, const Shape& strides) {
    TestGraph t;
    t.data("x", {6, 24});
    t.data("y", {2, 6, 4});
    t.node(compiler::kStridedCopyOp, {"x"}, {"y"},
           {{"base", base}, {"strides", std::vector<int64_t>(strides)}});
    return t;
  };
  // Columns [8, 16) of each row as two heads of 4: y[h][s][d] = x[s][8 + 4 h + d].
  Floats want(48);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t d = 0; d < 4; ++d) want[(h * 6 + r) * 4 + d] = x[r * 24 + 8 + 4 * h + d];
  expect_close(lower_and_run(graph(8, {4, 24, 1}), {x}).at(0), want, "StridedCopy");
  for (const auto& [base, strides] :
       std::vector<std::pair<int64_t, Shape>>{{21, {4, 24, 1}}, {-1, {4, 24, 1}}, {8, {4, 24}}}) {
    TestGraph t = graph(base, strides);
    auto p = compiler::lower_node(t.g, t.g.nodes.back(), ops::TargetInfo{});
    EXPECT_FALSE(p.ok()) << base;
  }
}

TEST(CompilerDataMovement, ConcatAndSplit) {
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    Shape s0 = {2, 3, 5}, s1 = s0, s2 = s0, o = s0;
    s1[a] = 4;
    s2[a] = 1;
    o[a] = s0[a] + s1[a] + s2[a];
    Floats x0 = random_floats(count(s0), 21), x1 = random_floats(count(s1), 22),
           x2 = random_floats(count(s2), 23);
    Floats want(count(o));
    for (int64_t i = 0; i < count(o); ++i) {
      auto c = coords_of(i, o);
      const Floats* src = &x0;
      const Shape* ss = &s0;
      if (c[a] >= s0[a] + s1[a]) {
        src = &x2;
        ss = &s2;
        c[a] -= s0[a] + s1[a];
      } else if (c[a] >= s0[a]) {
        src = &x1;
        ss = &s1;
        c[a] -= s0[a];
      }
      auto st = strides_of(*ss);
      want[i] = (*src)[c[0] * st[0] + c[1] * st[1] + c[2] * st[2]];
    }
    {
      TestGraph t;
      t.data("a", s0);
      t.data("b", s1);
      t.data("c", s2);
      t.data("y", o);
      t.node("Concat", {"a", "b", "c"}, {"y"}, {{"axis", axis}});
      expect_close(lower_and_run(t, {x0, x1, x2}).at(0), want, "Concat " + std::to_string(axis));
    }
    {  // Split it back: sizes as an input (opset 13) and as an attribute (opset 11)
      for (int64_t opset : {11, 13}) {
        TestGraph t(opset);
        t.data("x", o);
        t.data("a", s0);
        t.data("b", s1);
        t.data("c", s2);
        std::vector<int64_t> sizes = {s0[a], s1[a], s2[a]};
        std::map<std::string, frontend::AttrValue> attrs = {{"axis", axis}};
        std::vector<std::string> inputs = {"x"};
        if (opset >= 13) {
          t.ints("split", {3}, sizes);
          inputs.push_back("split");
        } else {
          attrs["split"] = sizes;
        }
        t.node("Split", inputs, {"a", "b", "c"}, attrs);
        auto out = lower_and_run(t, {want});
        ASSERT_EQ(out.size(), 3u);
        expect_close(out[0], x0, "Split a");
        expect_close(out[1], x1, "Split b");
        expect_close(out[2], x2, "Split c");
      }
    }
  }
  // Equal parts, default axis 0.
  TestGraph t;
  t.data("x", {6, 5});
  t.data("a", {2, 5});
  t.data("b", {2, 5});
  t.data("c", {2, 5});
  t.node("Split", {"x"}, {"a", "b", "c"});
  Floats x = random_floats(30, 24);
  auto out = lower_and_run(t, {x});
  ASSERT_EQ(out.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    expect_close(out[i], Floats(x.begin() + 10 * i, x.begin() + 10 * (i + 1)), "equal split");
  }
}

TEST(CompilerDataMovement, ZeroSizedSplit) {
  TestGraph t;
  t.data("x", {0});
  for (const char* o : {"a", "b", "c"}) t.data(o, {0});
  t.ints("split", {3}, {0, 0, 0});
  t.node("Split", {"x", "split"}, {"a", "b", "c"});
  auto out = lower_and_run(t, {{}});
  ASSERT_EQ(out.size(), 3u);
  for (const Floats& o : out) EXPECT_TRUE(o.empty());

  TestGraph uneven;  // equal parts that do not divide the axis
  uneven.data("x", {5});
  uneven.data("a", {2});
  uneven.data("b", {3});
  uneven.node("Split", {"x"}, {"a", "b"});
  auto p = compiler::lower_node(uneven.g, uneven.g.nodes.back(), ops::TargetInfo{});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
}

TEST(CompilerDataMovement, Slice) {
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const Shape s = {5, 7, 9};
  Floats x = random_floats(count(s), 25);
  std::vector<Case> cases = {
      {{1, 2}, {4, 6}, {0, 1}, {}},
      {{0, 1, 2}, {5, 7, 9}, {}, {}},
      {{-3}, {100}, {-1}, {1}},
      {{8}, {-100}, {2}, {-2}},
      {{-1, 6}, {-6, 0}, {0, 1}, {-1, -3}},
      {{1, 0}, {1000, 3}, {1, 2}, {2, 1}},
      {{10}, {20}, {0}, {1}},  // start past the end: empty
      {{0}, {-1}, {2}, {3}},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> axes = c.axes, steps = c.steps;
    if (axes.empty()) {
      for (size_t i = 0; i < c.starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(c.starts.size(), 1);
    std::vector<int64_t> begin(3, 0), step(3, 1);
    Shape o = s;
    for (size_t i = 0; i < c.starts.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + 3 : axes[i], dim = s[a], st = steps[i];
      int64_t lo = c.starts[i] < 0 ? c.starts[i] + dim : c.starts[i];
      int64_t hi = c.ends[i] < 0 ? c.ends[i] + dim : c.ends[i];
      if (st > 0) {
        lo = std::clamp<int64_t>(lo, 0, dim);
        hi = std::clamp<int64_t>(hi, 0, dim);
        o[a] = std::max<int64_t>(0, (hi - lo + st - 1) / st);
      } else {
        lo = std::clamp<int64_t>(lo, 0, dim - 1);
        hi = std::clamp<int64_t>(hi, -1, dim - 1);
        o[a] = std::max<int64_t>(0, (lo - hi - st - 1) / -st);
      }
      begin[a] = lo;
      step[a] = st;
    }
    TestGraph t;
    t.data("x", s);
    t.data("y", o);
    int64_t k = static_cast<int64_t>(c.starts.size());
    t.ints("starts", {k}, c.starts);
    t.ints("ends", {k}, c.ends);
    std::vector<std::string> inputs = {"x", "starts", "ends"};
    if (!c.axes.empty()) {
      t.ints("axes", {k}, c.axes);
      inputs.push_back("axes");
    }
    if (!c.steps.empty()) {
      ASSERT_FALSE(c.axes.empty()) << "steps need axes in this test";
      t.ints("steps", {k}, c.steps);
      inputs.push_back("steps");
    }
    t.node("Slice", inputs, {"y"});
    Floats want = gather_ref(o, x, s, [&](const std::vector<int64_t>& oc) {
      std::vector<int64_t> ic(3);
      for (int d = 0; d < 3; ++d) ic[d] = begin[d] + oc[d] * step[d];
      return ic;
    });
    auto out = lower_and_run(t, {x});
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], want, "Slice to " + frontend::dims_text(o));
  }
}

TEST(CompilerDataMovement, Pad) {
  const Shape s = {2, 3, 5};
  Floats x = random_floats(count(s), 26);
  struct Case {
    std::string mode;
    std::vector<int64_t> pads;
    bool value_input;
  };
  for (const Case& c : std::vector<Case>{{"constant", {0, 1, 2, 1, 0, 3}, true},
                                         {"constant", {0, 0, 1, 0, 0, 2}, false},
                                         {"constant", {0, -1, 2, 1, 1, -2}, true},
                                         {"edge", {1, 2, 3, 0, 1, 2}, false},
                                         {"reflect", {1, 2, 4, 1, 1, 3}, false}}) {
    Shape o = s;
    for (int d = 0; d < 3; ++d) o[d] += c.pads[d] + c.pads[3 + d];
    TestGraph t;
    t.data("x", s);
    t.data("y", o);
    t.ints("pads", {6}, c.pads);
    std::vector<std::string> inputs = {"x", "pads"};
    std::vector<Floats> in = {x};
    if (c.value_input) {
      t.data("v", {});
      inputs.push_back("v");
      in.push_back({1.5f});
    }
    t.node("Pad", inputs, {"y"}, {{"mode", c.mode}});
    const float fill = c.value_input ? 1.5f : 0.0f;
    Floats want(count(o));
    auto st = strides_of(s);
    for (int64_t i = 0; i < count(o); ++i) {
      auto oc = coords_of(i, o);
      int64_t f = 0;
      bool inside = true;
      for (int d = 0; d < 3; ++d) {
        int64_t j = oc[d] - c.pads[d], dim = s[d];
        if (c.mode == "edge") j = std::clamp<int64_t>(j, 0, dim - 1);
        if (c.mode == "reflect") {
          if (j < 0) j = -j;
          if (j >= dim) j = 2 * (dim - 1) - j;
        }
        inside = inside && j >= 0 && j < dim;
        f += j * st[d];
      }
      want[i] = inside ? x[f] : fill;
    }
    auto out = lower_and_run(t, in);
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], want, "Pad " + c.mode);
  }
}

TEST(CompilerDataMovement, Gather) {
  const Shape s = {4, 5, 3};
  Floats x = random_floats(count(s), 27);
  struct Case {
    int64_t axis;
    Shape index_shape;
    std::vector<int64_t> indices;
  };
  for (const Case& c : std::vector<Case>{{0, {3}, {3, 0, 1}},
                                         {1, {2, 2}, {4, -5, 2, 3}},
                                         {-1, {}, {-1}},
                                         {1, {4}, {1, 2, 3, 0}},
                                         {0, {2}, {-1, -2}}}) {
    const int64_t a = c.axis < 0 ? c.axis + 3 : c.axis;
    Shape o(s.begin(), s.begin() + a);
    o.insert(o.end(), c.index_shape.begin(), c.index_shape.end());
    o.insert(o.end(), s.begin() + a + 1, s.end());
    TestGraph t;
    t.data("x", s);
    t.data("y", o);
    t.ints("i", c.index_shape, c.indices);
    t.node("Gather", {"x", "i"}, {"y"}, {{"axis", c.axis}});
    const size_t k = c.index_shape.size();
    Floats want = gather_ref(o, x, s, [&](const std::vector<int64_t>& oc) {
      std::vector<int64_t> ic(oc.begin(), oc.begin() + a);
      int64_t flat = 0;
      for (size_t d = 0; d < k; ++d) flat = flat * c.index_shape[d] + oc[a + d];
      int64_t idx = c.indices[flat];
      ic.push_back(idx < 0 ? idx + s[a] : idx);
      ic.insert(ic.end(), oc.begin() + a + k, oc.end());
      return ic;
    });
    auto out = lower_and_run(t, {x});
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], want, "Gather axis " + std::to_string(c.axis));
  }
}

TEST(CompilerLowering, ErrorsInsteadOfAborts) {
  {  // Gather with computed indices
    TestGraph t;
    t.data("x", {4, 3});
    t.data("i", {2});
    t.g.tensors["i"].dtype = DType::kInt64;
    t.data("y", {2, 3});
    t.node("Gather", {"x", "i"}, {"y"});
    auto p = compiler::lower_node(t.g, t.g.nodes.back(), ops::TargetInfo{});
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(p.status().message().find("Gather"), std::string::npos);
  }
  {  // axis out of range
    TestGraph t;
    t.data("x", {4, 3});
    t.data("y", {4, 3});
    t.node("Softmax", {"x"}, {"y"}, {{"axis", int64_t{2}}});
    auto p = compiler::lower_node(t.g, t.g.nodes.back(), ops::TargetInfo{});
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  }
  {  // an op without a standalone kernel
    TestGraph t;
    t.data("x", {4, 3});
    t.data("y", {4, 3});
    t.node("Conv", {"x"}, {"y"});
    EXPECT_FALSE(compiler::lower_node(t.g, t.g.nodes.back(), ops::TargetInfo{}).ok());
  }
  {  // a broadcast that does not fit
    TestGraph t;
    t.data("a", {4, 3});
    t.data("b", {4});
    t.data("y", {4, 3});
    t.node("Add", {"a", "b"}, {"y"});
    auto p = compiler::lower_node(t.g, t.g.nodes.back(), ops::TargetInfo{});
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.status().message().find("broadcast"), std::string::npos);
  }
  EXPECT_TRUE(compiler::is_view_op("Reshape"));
  EXPECT_TRUE(compiler::is_view_op("Dropout"));
  EXPECT_FALSE(compiler::is_view_op("Transpose"));
}

}  // namespace
}  // namespace kiln
