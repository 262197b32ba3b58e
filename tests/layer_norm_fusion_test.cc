// compiler/layer_norm_fusion.h: a LayerNormalization written out as nine nodes (PyTorch's export
// below opset 17) compiles as one LayerNormalization kernel and computes the same; a pattern whose
// intermediate is read elsewhere is left as it is, and still computes right.
#include "compiler/layer_norm_fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/compile_onnx.h"

namespace kiln {
namespace {

constexpr int64_t kRows = 6, kWidth = 40;
constexpr float kEps = 1e-5f;

struct WrittenOut {
  testing::OnnxModel model;
  std::vector<float> gamma, beta;
};

// y = LayerNorm(x) over x's last axis, as nine nodes; with `d_is_output`, x - mean is also a
// graph output.
WrittenOut written_out_layer_norm(bool d_is_output) {
  WrittenOut w;
  testing::OnnxModel& m = w.model;
  m.input("x", {2, 3, kWidth});
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < kWidth; ++i) {
    w.gamma.push_back(u(rng) + 1.5f);
    w.beta.push_back(u(rng));
  }
  m.floats("gamma", {kWidth}, w.gamma);
  m.floats("beta", {kWidth}, w.beta);
  m.floats("two", {}, {2.0f});
  m.floats("eps", {}, {kEps});
  testing::OnnxModel::attr(m.node("ReduceMean", {"x"}, {"mean"}), "axes", std::vector<int64_t>{-1});
  m.node("Sub", {"x", "mean"}, {"d"});
  m.node("Pow", {"d", "two"}, {"sq"});
  testing::OnnxModel::attr(m.node("ReduceMean", {"sq"}, {"var"}), "axes", std::vector<int64_t>{-1});
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"sd"});
  m.node("Div", {"d", "sd"}, {"n"});
  m.node("Mul", {"n", "gamma"}, {"scaled"});
  m.node("Add", {"scaled", "beta"}, {"y"});
  m.output("y");
  if (d_is_output) m.output("d");
  return w;
}

// Compiles and runs `w` on seeded x; checks y against a double-precision layer norm and returns
// the compiled model's steps.
std::vector<std::string> CompileRunAndCheck(WrittenOut& w, const std::string& file) {
  std::optional<testing::CompiledOnnx> compiled = testing::compile_onnx(w.model, file);
  if (!compiled) return {};
  GraphExecutor* exec = compiled->exec.get();
  const ModelArtifact* artifact = &compiled->artifact;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 3);
  std::vector<float> x(kRows * kWidth);
  for (float& v : x) v = u(rng);
  EXPECT_TRUE(exec->set_input("x", x).ok());
  exec->run();
  std::span<const float> y = exec->get_output(0);
  double max_err = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < kWidth; ++i) mean += x[r * kWidth + i];
    mean /= kWidth;
    for (int64_t i = 0; i < kWidth; ++i) var += std::pow(x[r * kWidth + i] - mean, 2);
    var /= kWidth;
    for (int64_t i = 0; i < kWidth; ++i) {
      double want = (x[r * kWidth + i] - mean) / std::sqrt(var + kEps) * w.gamma[i] + w.beta[i];
      max_err = std::max(max_err, std::abs(want - y[r * kWidth + i]));
    }
  }
  EXPECT_LT(max_err, 1e-5);
  std::vector<std::string> labels;
  for (const ModelStep& step : artifact->steps) labels.push_back(step.label);
  return labels;
}

TEST(LayerNormFusion, NineNodesBecomeOneKernel) {
  WrittenOut w = written_out_layer_norm(false);
  Result<frontend::Graph> graph = frontend::import_onnx(w.model.write("ln_pass"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(compiler::fuse_layer_norms(&*graph), 8);
  ASSERT_EQ(graph->nodes.size(), 1u);
  const frontend::Node& ln = graph->nodes[0];
  EXPECT_EQ(ln.op_type, "LayerNormalization");
  EXPECT_EQ(ln.inputs, (std::vector<std::string>{"x", "gamma", "beta"}));
  EXPECT_EQ(ln.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(ln.attr_float("epsilon", 0), kEps);

  std::vector<std::string> steps = CompileRunAndCheck(w, "ln_fused");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_NE(steps[0].find("LayerNormalization"), std::string::npos) << steps[0];
}

TEST(LayerNormFusion, AnIntermediateReadElsewhereKeepsTheNodes) {
  WrittenOut w = written_out_layer_norm(true);
  Result<frontend::Graph> graph = frontend::import_onnx(w.model.write("ln_kept"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(compiler::fuse_layer_norms(&*graph), 0);
  EXPECT_EQ(graph->nodes.size(), 9u);
  std::vector<std::string> steps = CompileRunAndCheck(w, "ln_unfused");
  EXPECT_GT(steps.size(), 1u);
}

}  // namespace
}  // namespace kiln
