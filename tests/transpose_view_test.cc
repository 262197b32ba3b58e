// A Transpose that moves only dimensions of one element (BERT's [1, s, d] -> [s, 1, d] around
// its attention) compiles to a view of its input (compiler/op_lowering.h
// is_order_preserving_transpose): no kernel, and the model computes the same. One that moves
// elements keeps its kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "tests/compile_onnx.h"

namespace kiln {
namespace {

// y = Relu(Transpose(x, perm)) for x of shape [1, 4, 8]; returns the compiled model's step
// labels after checking y against Relu(x) transposed here.
std::vector<std::string> CompileAndCheck(const std::vector<int64_t>& perm,
                                         const std::string& file) {
  const std::vector<int64_t> shape = {1, 4, 8};
  testing::OnnxModel m;
  m.input("x", shape);
  testing::OnnxModel::attr(m.node("Transpose", {"x"}, {"t"}), "perm", perm);
  m.node("Relu", {"t"}, {"y"});
  m.output("y");
  std::optional<testing::CompiledOnnx> compiled = testing::compile_onnx(m, file);
  if (!compiled) return {};
  GraphExecutor* exec = compiled->exec.get();
  const ModelArtifact* artifact = &compiled->artifact;
  const std::vector<float> x = testing::run_on_random_input(*exec, "x", 32, 5);
  std::span<const float> y = exec->get_output(0);
  EXPECT_EQ(y.size(), x.size());
  // Element (i0, i1, i2) of y reads x at the coordinates perm sends them to.
  std::vector<int64_t> out_shape;
  for (int64_t p : perm) out_shape.push_back(shape[p]);
  for (int64_t i = 0; i < 32 && i < static_cast<int64_t>(y.size()); ++i) {
    const int64_t o[3] = {i / (out_shape[1] * out_shape[2]), i / out_shape[2] % out_shape[1],
                          i % out_shape[2]};
    int64_t c[3];
    for (int d = 0; d < 3; ++d) c[perm[d]] = o[d];
    EXPECT_EQ(y[i], std::max(0.0f, x[(c[0] * 4 + c[1]) * 8 + c[2]])) << "element " << i;
  }
  std::vector<std::string> labels;
  for (const ModelStep& s : artifact->steps) labels.push_back(s.label);
  return labels;
}

bool AnyTranspose(const std::vector<std::string>& labels) {
  return std::any_of(labels.begin(), labels.end(),
                     [](const std::string& l) { return l.find("Transpose") != std::string::npos; });
}

TEST(TransposeView, MovingOnlyADimensionOfOneIsAView) {
  std::vector<std::string> labels = CompileAndCheck({1, 0, 2}, "transpose_view");
  ASSERT_FALSE(labels.empty());
  EXPECT_FALSE(AnyTranspose(labels)) << labels.front();
}

TEST(TransposeView, MovingElementsKeepsItsKernel) {
  std::vector<std::string> labels = CompileAndCheck({0, 2, 1}, "transpose_kernel");
  EXPECT_TRUE(AnyTranspose(labels));
}

}  // namespace
}  // namespace kiln
