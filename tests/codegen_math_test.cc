// Math calls (exp, log, sqrt, tanh, erf, pow, abs, floor, ceil) in generated code: each op on
// inputs that include negatives, zeros, subnormals, large values, infinities and NaN, in a
// serial loop and in vectorized loops of 16 and of 13 lanes, against the double-precision std::
// function rounded to float (relative error 1e-6) and against the interpreter.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "builder/build.h"
#include "ir/interpreter.h"
#include "ir/ir.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"

namespace kiln {
namespace {

using namespace ir;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int64_t kCount = 16 * 13;  // every lane count below divides it

// `count` values from lo to hi, evenly spaced (geometrically when `geometric`), then `specials`,
// the whole cycled or cut to kCount values.
std::vector<float> inputs(double lo, double hi, bool geometric, std::vector<float> specials) {
  std::vector<float> v = std::move(specials);
  const int64_t n = kCount - static_cast<int64_t>(v.size());
  for (int64_t i = 0; i < n; ++i) {
    double t = static_cast<double>(i) / static_cast<double>(n - 1);
    v.push_back(static_cast<float>(geometric ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t));
  }
  v.resize(kCount);
  return v;
}

// Whether `got` is `want` within a relative 1e-6 (and an absolute 1e-37, for subnormal
// results); NaN must match NaN, infinities must match exactly.
bool close(float got, float want) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(static_cast<double>(got) - want) <= 1e-6 * std::fabs(want) + 1e-37;
}

enum class Loop { kSerial, kVector16, kVector13 };

// out[i] = op(x[i]) or op(x[i], y[i]) for i < kCount, with the loop shape asked for.
Program program_for(CallOp op, Loop loop) {
  Buffer x("x", {kCount}, BufferScope::kArgument), y("y", {kCount}, BufferScope::kArgument);
  Buffer out("out", {kCount}, BufferScope::kArgument);
  Expr o = var("o"), v = var("v");
  auto body = [&](const Expr& i) {
    std::vector<Expr> args = {x.load_flat(i)};
    if (call_op_arity(op) == 2) args.push_back(y.load_flat(i));
    return StoreFlat(out, i, call(op, args));
  };
  Stmt s;
  switch (loop) {
    case Loop::kSerial:
      s = For(o, kCount, LoopKind::kSerial, body(o));
      break;
    case Loop::kVector16:
    case Loop::kVector13: {
      const int64_t lanes = loop == Loop::kVector16 ? 16 : 13;
      s = LoopNest({{o, kCount / lanes}, {v, lanes, LoopKind::kVectorized}}, body(o * lanes + v));
      break;
    }
  }
  Program p;
  p.name = std::string("math_") + call_op_name(op);
  p.buffers = {x, y, out};
  p.num_inputs = 2;
  p.num_outputs = 1;
  p.stages = {{"main", s, true}};
  return p;
}

// Runs the compiled program on x, y; returns out.
std::vector<float> run_compiled(const Program& p, std::vector<float> x, std::vector<float> y) {
  std::vector<float> out(kCount, -1.0f);
  auto built = builder::build_program(p, builder::host_target());
  EXPECT_TRUE(built.ok()) << built.status().message();
  if (!built.ok()) return out;
  auto artifact = Artifact::load_from_bytes(built->shared_object, p.name);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return out;
  auto fn = (*artifact)->stage("main");
  EXPECT_TRUE(fn.ok());
  if (!fn.ok()) return out;
  ThreadPool pool(1);
  std::vector<float*> buffers = {x.data(), y.data(), out.data()};
  (*fn)(buffers.data(), pool.api());
  return out;
}

std::vector<float> run_interpreted(const Program& p, std::vector<float> x, std::vector<float> y) {
  std::vector<float> out(kCount, -1.0f);
  Status s = interpret(p, {x.data(), y.data(), out.data()});
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

struct Case {
  CallOp op;
  std::function<double(double, double)> reference;
  std::vector<float> x, y;  // y: the exponents of pow, unused otherwise
};

void check(CallOp op, std::function<double(double, double)> reference, std::vector<float> x,
           std::vector<float> y = {}) {
  const Case c{op, std::move(reference), std::move(x), std::move(y)};
  for (Loop loop : {Loop::kSerial, Loop::kVector16, Loop::kVector13}) {
    SCOPED_TRACE(std::string(call_op_name(c.op)) + " loop " +
                 std::to_string(static_cast<int>(loop)));
    Program p = program_for(c.op, loop);
    std::vector<float> y = c.y.empty() ? std::vector<float>(kCount, 0.0f) : c.y;
    std::vector<float> got = run_compiled(p, c.x, y);
    std::vector<float> interpreted = run_interpreted(p, c.x, y);
    int failures = 0;
    for (int64_t i = 0; i < kCount && failures < 5; ++i) {
      float want = static_cast<float>(c.reference(c.x[i], y[i]));
      bool ok = close(got[i], want) && close(interpreted[i], want);
      if (!ok) ++failures;
      EXPECT_TRUE(ok) << call_op_name(c.op) << "(" << c.x[i] << ", " << y[i] << "): compiled "
                      << got[i] << ", interpreted " << interpreted[i] << ", expected " << want;
    }
  }
}

const std::vector<float> kRounding = {0.0f,  -0.0f,       0.5f,    -0.5f,      1.5f,
                                      -2.5f, 0.49999997f, -1e-30f, 8388607.5f, -8388609.0f,
                                      1e20f, kInf,        -kInf,   kNaN};

TEST(CodegenMath, Exp) {
  check(
      CallOp::kExp, [](double x, double) { return std::exp(x); },
      inputs(-110, 95, false,
             {0.0f, -0.0f, 1e-8f, -1e-8f, 88.72f, 88.73f, -87.33f, -87.34f, -100.0f, -103.97f,
              -104.5f, 0.34657359f, -0.34657359f, kInf, -kInf, kNaN}));
}

TEST(CodegenMath, Log) {
  check(
      CallOp::kLog, [](double x, double) { return std::log(x); },
      inputs(1e-38, 3e38, true, {0.0f, -0.0f, -1.0f, 1.0f, 1e-45f, 1e-40f, kInf, -kInf, kNaN}));
}

TEST(CodegenMath, Sqrt) {
  check(
      CallOp::kSqrt, [](double x, double) { return std::sqrt(x); },
      inputs(1e-38, 3e38, true, {0.0f, -0.0f, -4.0f, 1e-45f, 2.0f, kInf, -kInf, kNaN}));
}

TEST(CodegenMath, Tanh) {
  check(
      CallOp::kTanh, [](double x, double) { return std::tanh(x); },
      inputs(-12, 12, false, {0.0f,  -0.0f,   1e-30f,     -1e-20f, 1e-4f,   0.01f, -0.05f, 0.1f,
                              0.3f,  -0.5f,   0.6249999f, 0.625f,  -0.625f, 0.63f, 9.0f,   -9.1f,
                              45.0f, -100.0f, 1e30f,      kInf,    -kInf,   kNaN}));
}

TEST(CodegenMath, Erf) {
  check(
      CallOp::kErf, [](double x, double) { return std::erf(x); },
      inputs(-6, 6, false, {0.0f, -0.0f, 1e-30f, -1e-7f, 0.8f, 1e20f, kInf, -kInf, kNaN}));
}

TEST(CodegenMath, AbsFloorCeil) {
  std::vector<float> x = inputs(-1e8, 1e8, false, kRounding);
  for (float& v : x) v = v == 0.0f || std::isnan(v) || std::isinf(v) ? v : v / 7777.0f;
  x.insert(x.begin(), kRounding.begin(), kRounding.end());
  x.resize(kCount);
  check(
      CallOp::kAbs, [](double v, double) { return std::fabs(v); }, x);
  check(
      CallOp::kFloor, [](double v, double) { return std::floor(v); }, x);
  check(
      CallOp::kCeil, [](double v, double) { return std::ceil(v); }, x);
}

TEST(CodegenMath, Pow) {
  // Positive bases with exponents of both signs, then the special cases of C's powf: negative
  // bases with integer exponents, zeros, ones, infinities and NaN.
  std::vector<float> base = inputs(1e-3, 50, true, {}), exponent = inputs(-12, 12, false, {});
  const std::vector<std::pair<float, float>> specials = {
      {-2.0f, 3.0f}, {-2.0f, 2.0f},   {-2.0f, -3.0f},  {-2.0f, 0.5f},   {0.0f, 0.0f},
      {0.0f, -1.0f}, {-0.0f, 3.0f},   {0.0f, 2.5f},    {1.0f, kNaN},    {kNaN, 0.0f},
      {kNaN, 1.0f},  {kInf, -1.0f},   {-kInf, 3.0f},   {2.0f, kInf},    {0.5f, kInf},
      {3.0f, 90.0f}, {2.0f, -149.0f}, {10.0f, -40.0f}, {1.0001f, 1e5f}, {7.0f, 1.0f}};
  for (size_t i = 0; i < specials.size(); ++i) {
    base[i] = specials[i].first;
    exponent[i] = specials[i].second;
  }
  check(
      CallOp::kPow, [](double a, double b) { return std::pow(a, b); }, base, exponent);
}

// A loop-invariant operand (a scalar) next to a vector one, and calls nested in arithmetic, as
// in sigmoid and GELU, in a vectorized loop.
TEST(CodegenMath, MixedScalarAndVectorOperands) {
  Buffer x("x", {kCount}, BufferScope::kArgument), s("s", {1}, BufferScope::kArgument);
  Buffer out("out", {kCount}, BufferScope::kArgument);
  Expr o = var("o"), v = var("v"), i = o * 16 + v;
  Expr xi = x.load_flat(i);
  Expr sigmoid = f32(1) / (f32(1) + exp(f32(0) - xi));
  Expr gelu = f32(0.5) * xi * (f32(1) + erf(xi * f32(0.70710678118654752)));
  Stmt body =
      LoopNest({{o, kCount / 16}, {v, 16, LoopKind::kVectorized}},
               StoreFlat(out, i, pow(sigmoid + gelu, s.load_flat(0)) + tanh(s.load_flat(0))));
  Program p;
  p.name = "mixed";
  p.buffers = {x, s, out};
  p.num_inputs = 2;
  p.num_outputs = 1;
  p.stages = {{"main", body, true}};
  std::vector<float> xs = inputs(-8, 8, false, {}), scalar(kCount, 0.0f);
  scalar[0] = 1.5f;
  std::vector<float> got = run_compiled(p, xs, scalar);
  std::vector<float> interpreted = run_interpreted(p, xs, scalar);
  for (int64_t k = 0; k < kCount; ++k) {
    double xd = xs[k];
    double want =
        std::pow(1 / (1 + std::exp(-xd)) + 0.5 * xd * (1 + std::erf(xd / std::sqrt(2.0))), 1.5) +
        std::tanh(1.5);
    EXPECT_NEAR(got[k], want, 1e-5 * std::fabs(want)) << "x = " << xd;
    EXPECT_NEAR(got[k], interpreted[k], 1e-5 * std::fabs(want)) << "x = " << xd;
  }
}

// log becomes calls of libm's logf, which the shared object leaves to the loading process: they
// must resolve in a forked child too (runner and builder workers are forks of kiln).
TEST(CodegenMath, LibmCallsResolveInAForkedChild) {
  std::vector<float> x = inputs(1e-3, 30, true, {}), y(kCount, 0.0f);
  Program p = program_for(CallOp::kLog, Loop::kVector16);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<float> out = run_compiled(p, x, y);
    bool ok = true;
    for (int64_t i = 0; i < kCount; ++i) ok = ok && close(out[i], std::log(x[i]));
    _exit(ok && !::testing::Test::HasFailure() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died: status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace kiln
