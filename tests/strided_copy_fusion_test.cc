// compiler/strided_copy_fusion.h: a Slice -> Reshape -> Transpose chain (BERT's Q, K, V heads)
// compiles to one strided copy and computes what the three nodes compute; a chain whose slice
// output is read twice is left as it is. reshape_strides: which reshapes of a strided tensor are
// strides.
#include "compiler/strided_copy_fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "tests/compile_onnx.h"

namespace kiln {
namespace {

using compiler::reshape_strides;
using Dims = std::vector<int64_t>;

TEST(ReshapeStrides, SplitsAndMergesWhatIsContiguous) {
  // A row-major [6, 24] split into [6, 2, 12] and merged back.
  EXPECT_EQ(reshape_strides({6, 24}, {24, 1}, {6, 2, 12}), (Dims{24, 12, 1}));
  EXPECT_EQ(reshape_strides({6, 2, 12}, {24, 12, 1}, {6, 24}), (Dims{24, 1}));
  // A slice of 8 of every 24 columns ([6, 8] with row stride 24): its columns split, ...
  EXPECT_EQ(reshape_strides({6, 8}, {24, 1}, {6, 2, 4}), (Dims{24, 4, 1}));
  // ... but rows and columns no longer merge.
  EXPECT_EQ(reshape_strides({6, 8}, {24, 1}, {48}), std::nullopt);
  EXPECT_EQ(reshape_strides({6, 8}, {24, 1}, {3, 16}), std::nullopt);
  // Dimensions of one element anywhere, with stride 0.
  EXPECT_EQ(reshape_strides({6, 1, 8}, {768, 768, 1}, {1, 6, 2, 4, 1}), (Dims{0, 768, 4, 1, 0}));
  // Element counts that differ.
  EXPECT_EQ(reshape_strides({6, 8}, {8, 1}, {6, 9}), std::nullopt);
}

// y = Relu(Transpose(Reshape(Slice(x, columns [8, 16)), [6, 2, 4]), perm 1, 0, 2)) for x of
// shape [6, 1, 24]; with `second_reader`, z = Relu(the slice) is a second output. Returns the
// compiled model's step labels after checking y (and z).
std::vector<std::string> CompileAndCheck(bool second_reader, const std::string& file) {
  testing::OnnxModel m;
  m.input("x", {6, 1, 24});
  m.ints("starts", {1}, {8});
  m.ints("ends", {1}, {16});
  m.ints("axes", {1}, {2});
  m.ints("shape", {3}, {6, 2, 4});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"s"});
  m.node("Reshape", {"s", "shape"}, {"r"});
  testing::OnnxModel::attr(m.node("Transpose", {"r"}, {"t"}), "perm", Dims{1, 0, 2});
  m.node("Relu", {"t"}, {"y"});
  m.output("y");
  if (second_reader) {
    m.node("Relu", {"s"}, {"z"});
    m.output("z");
  }
  std::optional<testing::CompiledOnnx> compiled = testing::compile_onnx(m, file);
  if (!compiled) return {};
  GraphExecutor* exec = compiled->exec.get();
  const ModelArtifact* artifact = &compiled->artifact;
  const std::vector<float> x = testing::run_on_random_input(*exec, "x", 6 * 24, 7);
  // y[h][s][d] = relu(x[s][0][8 + 4 h + d])
  std::span<const float> y = exec->get_output(0);
  EXPECT_EQ(y.size(), 48u);
  for (int64_t h = 0; h < 2 && y.size() == 48; ++h) {
    for (int64_t s = 0; s < 6; ++s) {
      for (int64_t d = 0; d < 4; ++d) {
        EXPECT_EQ(y[(h * 6 + s) * 4 + d], std::max(0.0f, x[s * 24 + 8 + 4 * h + d]))
            << h << " " << s << " " << d;
      }
    }
  }
  if (second_reader) {
    std::span<const float> z = exec->get_output(1);
    EXPECT_EQ(z.size(), 48u);
    for (int64_t s = 0; s < 6 && z.size() == 48; ++s) {
      for (int64_t c = 0; c < 8; ++c) {
        EXPECT_EQ(z[s * 8 + c], std::max(0.0f, x[s * 24 + 8 + c])) << s << " " << c;
      }
    }
  }
  std::vector<std::string> labels;
  for (const ModelStep& s : artifact->steps) labels.push_back(s.label);
  return labels;
}

bool Any(const std::vector<std::string>& labels, const std::string& op) {
  return std::any_of(labels.begin(), labels.end(), [&](const std::string& l) {
    return l.find(", " + op + ")") != std::string::npos;
  });
}

TEST(StridedCopyFusion, SliceReshapeTransposeIsOneCopy) {
  std::vector<std::string> labels = CompileAndCheck(false, "strided_copy");
  ASSERT_FALSE(labels.empty());
  EXPECT_TRUE(Any(labels, compiler::kStridedCopyOp)) << labels.front();
  EXPECT_FALSE(Any(labels, "Slice"));
  EXPECT_FALSE(Any(labels, "Transpose"));
}

TEST(StridedCopyFusion, ASliceReadTwiceIsLeftAsItIs) {
  std::vector<std::string> labels = CompileAndCheck(true, "strided_copy_shared");
  ASSERT_FALSE(labels.empty());
  EXPECT_FALSE(Any(labels, compiler::kStridedCopyOp));
  EXPECT_TRUE(Any(labels, "Slice"));
}

// Attention over two heads of 4: x [6, 1, 24] holds Q, K and V side by side; scores =
// Q K^T ([2, 6, 6]) and out = scores V ([2, 6, 4]), K^T and V cut out by strided copies. The
// batch_matmul kernels read their second operand transposed, so those copies write it so: no
// operand step transposes what a copy just wrote.
TEST(StridedCopyFusion, ACopyAMatMulReadsTransposedIsWrittenTransposed) {
  testing::OnnxModel m;
  m.input("x", {6, 1, 24});
  m.ints("shape", {3}, {6, 2, 4});
  m.ints("axes", {1}, {2});
  const char* names[] = {"q", "k", "v"};
  for (int64_t part = 0; part < 3; ++part) {
    const std::string n = names[part];
    m.ints(n + "_starts", {1}, {8 * part});
    m.ints(n + "_ends", {1}, {8 * part + 8});
    m.node("Slice", {"x", n + "_starts", n + "_ends", "axes"}, {n + "_s"});
    m.node("Reshape", {n + "_s", "shape"}, {n + "_r"});
    testing::OnnxModel::attr(m.node("Transpose", {n + "_r"}, {n}), "perm",
                             part == 1 ? Dims{1, 2, 0} : Dims{1, 0, 2});
  }
  m.node("MatMul", {"q", "k"}, {"scores"});
  m.node("MatMul", {"scores", "v"}, {"out"});
  m.output("out");
  std::optional<testing::CompiledOnnx> compiled = testing::compile_onnx(m, "attention_copies");
  ASSERT_TRUE(compiled);
  const std::vector<float> x = testing::run_on_random_input(*compiled->exec, "x", 6 * 24, 5);
  std::span<const float> out = compiled->exec->get_output(0);
  ASSERT_EQ(out.size(), 48u);
  auto at = [&](int64_t part, int64_t h, int64_t s, int64_t d) {
    return static_cast<double>(x[s * 24 + 8 * part + 4 * h + d]);
  };
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 6; ++i) {
      for (int64_t d = 0; d < 4; ++d) {
        double want = 0;
        for (int64_t j = 0; j < 6; ++j) {
          double score = 0;
          for (int64_t e = 0; e < 4; ++e) score += at(0, h, i, e) * at(1, h, j, e);
          want += score * at(2, h, j, d);
        }
        EXPECT_NEAR(out[(h * 6 + i) * 4 + d], want, 1e-4) << h << " " << i << " " << d;
      }
    }
  }
  int transposed = 0;
  for (const ModelStep& step : compiled->artifact.steps) {
    EXPECT_EQ(step.label.find("(operand "), std::string::npos) << step.label;
    transposed += step.label.find("(written transposed for its MatMul)") != std::string::npos;
  }
  EXPECT_EQ(transposed, 2) << "K^T and V";
}

}  // namespace
}  // namespace kiln
