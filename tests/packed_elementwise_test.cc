// Elementwise groups and channel Concats between convs computed in the convs' NCHW[b]c layout
// (compiler/lower_packed_elementwise.h): a DenseNet-style Concat -> BatchNorm -> Relu and a
// squeeze-excitation Mul by channel scales, compiled for the host and for AVX2, match a direct
// double-precision computation, and keep the layout where the channel counts allow it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "builder/target.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
#include "runtime/graph_executor.h"
#include "tests/onnx_models.h"

namespace kiln {
namespace {

using Tensor = std::vector<double>;  // NCHW with N = 1

struct Dims {
  int64_t c, h, w;
};

Tensor conv1x1(const Tensor& x, const Dims& d, const std::vector<float>& weight, int64_t k) {
  Tensor y(k * d.h * d.w, 0.0);
  for (int64_t o = 0; o < k; ++o)
    for (int64_t ci = 0; ci < d.c; ++ci)
      for (int64_t i = 0; i < d.h * d.w; ++i)
        y[o * d.h * d.w + i] += x[ci * d.h * d.w + i] * weight[o * d.c + ci];
  return y;
}

// The graph: c1 = Conv(x), c2 = Conv(x), cat = Concat(c1, c2, x), r = Relu(BatchNorm(cat)),
// s = Sigmoid(GlobalAveragePool(r)), a = r * s + cat, y = Conv(a). With x's channels a multiple
// of the convs' blocks every step between the convs can stay packed.
struct Case {
  int64_t c = 64, k = 64, k_out = 32, h = 6, w = 7;
};

class PackedBetweenConvs : public ::testing::TestWithParam<std::string> {
 protected:
  void run(const Case& cs, bool expect_packed) {
    Result<Target> target = builder::parse_target(GetParam());
    ASSERT_TRUE(target.ok()) << target.status().message();
    if (!builder::runs_on_host(*target).ok()) GTEST_SKIP() << GetParam() << " does not run here";
    const int64_t cat_c = 2 * cs.k + cs.c, hw = cs.h * cs.w;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    auto random = [&](size_t n, float lo = -1, float hi = 1) {
      std::vector<float> v(n);
      for (float& x : v) x = lo + (hi - lo) * (u(rng) + 1) / 2;
      return v;
    };
    std::vector<float> x = random(cs.c * hw), w1 = random(cs.k * cs.c), w2 = random(cs.k * cs.c),
                       w3 = random(cs.k_out * cat_c);
    std::vector<float> scale = random(cat_c, 0.5f, 1.5f), bias = random(cat_c),
                       mean = random(cat_c), var = random(cat_c, 0.5f, 2.0f);

    testing::OnnxModel m;
    m.input("x", {1, cs.c, cs.h, cs.w});
    m.floats("W1", {cs.k, cs.c, 1, 1}, w1);
    m.floats("W2", {cs.k, cs.c, 1, 1}, w2);
    m.floats("W3", {cs.k_out, cat_c, 1, 1}, w3);
    m.floats("scale", {cat_c}, scale);
    m.floats("bias", {cat_c}, bias);
    m.floats("mean", {cat_c}, mean);
    m.floats("var", {cat_c}, var);
    m.node("Conv", {"x", "W1"}, {"c1"});
    m.node("Conv", {"x", "W2"}, {"c2"});
    testing::OnnxModel::attr(m.node("Concat", {"c1", "c2", "x"}, {"cat"}), "axis", int64_t{1});
    m.node("BatchNormalization", {"cat", "scale", "bias", "mean", "var"}, {"bn"});
    m.node("Relu", {"bn"}, {"r"});
    m.node("GlobalAveragePool", {"r"}, {"g"});
    m.node("Sigmoid", {"g"}, {"s"});
    m.node("Mul", {"r", "s"}, {"rs"});
    m.node("Add", {"rs", "cat"}, {"a"});
    m.node("Conv", {"a", "W3"}, {"y"});
    m.output("y");
    Result<frontend::Graph> graph = frontend::import_onnx(m.write("packed_between_convs"));
    ASSERT_TRUE(graph.ok()) << graph.status().message();
    compiler::CompileOptions options;
    options.target = GetParam();
    Result<ModelArtifact> artifact = compiler::compile_model(*graph, options, nullptr);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    auto packed_step = [&](const std::string& op) {
      return std::any_of(artifact->steps.begin(), artifact->steps.end(), [&](const ModelStep& s) {
        return s.label.find(", " + op + ")") != std::string::npos &&
               s.label.find("(NCHW") != std::string::npos;
      });
    };
    if (expect_packed) {
      EXPECT_TRUE(packed_step("Concat"));
      EXPECT_TRUE(packed_step("BatchNormalization"));
      EXPECT_TRUE(packed_step("Mul"));
    }

    // The reference, in double.
    Tensor xd(x.begin(), x.end());
    Tensor c1 = conv1x1(xd, {cs.c, cs.h, cs.w}, w1, cs.k);
    Tensor c2 = conv1x1(xd, {cs.c, cs.h, cs.w}, w2, cs.k);
    Tensor cat = c1;
    cat.insert(cat.end(), c2.begin(), c2.end());
    cat.insert(cat.end(), xd.begin(), xd.end());
    Tensor r(cat.size()), a(cat.size());
    for (int64_t ch = 0; ch < cat_c; ++ch) {
      double sum = 0;
      for (int64_t i = 0; i < hw; ++i) {
        double v = (cat[ch * hw + i] - mean[ch]) * scale[ch] / std::sqrt(var[ch] + 1e-5) + bias[ch];
        r[ch * hw + i] = std::max(0.0, v);
        sum += r[ch * hw + i];
      }
      double s = 1 / (1 + std::exp(-sum / static_cast<double>(hw)));
      for (int64_t i = 0; i < hw; ++i) a[ch * hw + i] = r[ch * hw + i] * s + cat[ch * hw + i];
    }
    Tensor ref = conv1x1(a, {cat_c, cs.h, cs.w}, w3, cs.k_out);

    for (int threads : {1, 2}) {
      auto exec = GraphExecutor::create(*artifact, threads, "packed_between_convs");
      ASSERT_TRUE(exec.ok()) << exec.status().message();
      ASSERT_TRUE((*exec)->set_input("x", x).ok());
      (*exec)->run();
      std::span<const float> y = (*exec)->get_output(0);
      ASSERT_EQ(y.size(), ref.size());
      double err = 0, scale_ref = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        err = std::max(err, std::abs(y[i] - ref[i]));
        scale_ref = std::max(scale_ref, std::abs(ref[i]));
      }
      EXPECT_LT(err / scale_ref, 1e-5) << threads << " thread(s)";
    }
  }
};

TEST_P(PackedBetweenConvs, ChannelsInWholeBlocksStayPacked) { run(Case{}, true); }

// 40 input channels: a block of 16 or 32 does not divide them, so the Concat (and what reads it)
// computes in NCHW, or packed where the target's blocks are 8; either way the output is exact.
TEST_P(PackedBetweenConvs, ChannelsOutsideTheBlockStayExact) {
  Case cs;
  cs.c = 40;
  cs.k = 24;
  cs.h = 5;
  cs.w = 9;
  run(cs, false);
}

INSTANTIATE_TEST_SUITE_P(Targets, PackedBetweenConvs,
                         ::testing::Values("llvm", "llvm -mcpu=znver3"));

}  // namespace
}  // namespace kiln
