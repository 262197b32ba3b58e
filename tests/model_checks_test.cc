// End to end: models whose attributes or operand shapes are wrong are refused at import by
// `kiln tasks` and `kiln compile` (exit 2 naming the node and what is wrong), never a crash in
// ONNX's shape inference nor a model that computes out of bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/onnx_models.h"
#include "tests/run_kiln.h"

namespace kiln {
namespace {

using testing::CommandResult;
using testing::OnnxModel;

// `kiln tasks` and `kiln compile` on the model both exit 2 with one line holding every `parts`.
void expect_refused(const OnnxModel& m, const std::string& stem,
                    const std::vector<std::string>& parts) {
  std::string path = m.write(stem);
  std::string out = OnnxModel::temp_path(stem + ".kiln");
  for (const std::string& command : {"tasks " + path, "compile " + path + " -o " + out}) {
    SCOPED_TRACE(command);
    CommandResult r = testing::run_kiln(command);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    for (const std::string& part : parts) {
      EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in: " << r.output;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

OnnxModel conv_model() {
  OnnxModel m;
  m.input("X", {1, 4, 8, 8});
  m.weight("W", {8, 4, 3, 3});
  return m;
}

TEST(ModelChecks, ZeroStrideConvOrPoolIsRefusedNamingTheNode) {
  {
    OnnxModel m = conv_model();
    OnnxModel::attr(m.node("Conv", {"X", "W"}, {"Y"}, "conv0"), "strides",
                    std::vector<int64_t>{0, 1});
    m.output("Y");
    expect_refused(m, "stride0_conv", {"node 'conv0' (#0, Conv)", "strides 0x1"});
  }
  for (const std::string op : {"MaxPool", "AveragePool"}) {
    OnnxModel m;
    m.input("X", {1, 4, 8, 8});
    onnx::NodeProto* n = m.node(op, {"X"}, {"Y"}, "pool0");
    OnnxModel::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
    OnnxModel::attr(n, "strides", std::vector<int64_t>{2, 0});
    m.output("Y");
    expect_refused(m, "stride0_" + op, {"node 'pool0' (#0, " + op + ")", "strides 2x0"});
  }
}

TEST(ModelChecks, BadWindowAttributesAreRefused) {
  OnnxModel dilation = conv_model();
  OnnxModel::attr(dilation.node("Conv", {"X", "W"}, {"Y"}, "c"), "dilations",
                  std::vector<int64_t>{0, 0});
  dilation.output("Y");
  expect_refused(dilation, "dilation0", {"node 'c' (#0, Conv)", "dilations"});

  OnnxModel pads = conv_model();
  OnnxModel::attr(pads.node("Conv", {"X", "W"}, {"Y"}, "c"), "pads",
                  std::vector<int64_t>{-1, 0, 0, 0});
  pads.output("Y");
  expect_refused(pads, "negative_pads", {"node 'c' (#0, Conv)", "pads", "at least 0"});

  OnnxModel kernel;
  kernel.input("X", {1, 4, 8, 8});
  OnnxModel::attr(kernel.node("MaxPool", {"X"}, {"Y"}, "p"), "kernel_shape",
                  std::vector<int64_t>{0, 2});
  kernel.output("Y");
  expect_refused(kernel, "kernel0", {"node 'p' (#0, MaxPool)", "kernel_shape"});

  OnnxModel group = conv_model();
  OnnxModel::attr(group.node("Conv", {"X", "W"}, {"Y"}, "c"), "group", int64_t{0});
  group.output("Y");
  expect_refused(group, "group0", {"node 'c' (#0, Conv)", "group 0"});
}

TEST(ModelChecks, ConvKernelShapeThatContradictsTheWeightIsRefused) {
  OnnxModel m = conv_model();
  OnnxModel::attr(m.node("Conv", {"X", "W"}, {"Y"}, "conv0"), "kernel_shape",
                  std::vector<int64_t>{5, 5});
  m.output("Y");
  expect_refused(m, "kernel_contradicts",
                 {"node 'conv0' (#0, Conv)", "kernel_shape 5x5 contradicts the weight 8x4x3x3"});
}

TEST(ModelChecks, GemmWeightThatDoesNotMatchItsInputIsRefused) {
  // The mlp's fc3.weight of [10, 64] against a 32-wide input.
  OnnxModel m;
  m.input("X", {1, 32});
  m.weight("fc3.weight", {10, 64});
  OnnxModel::attr(m.node("Gemm", {"X", "fc3.weight"}, {"Y"}, "fc3"), "transB", int64_t{1});
  m.output("Y");
  expect_refused(m, "gemm_mismatch",
                 {"node 'fc3' (#0, Gemm)", "A 1x32 and B 10x64", "32 against 64"});

  // transB=0 with a transposed weight.
  OnnxModel t;
  t.input("X", {1, 32});
  t.weight("W", {10, 32});
  t.node("Gemm", {"X", "W"}, {"Y"}, "fc");
  t.output("Y");
  expect_refused(t, "gemm_untransposed", {"node 'fc' (#0, Gemm)", "A 1x32 and B 10x32"});
}

TEST(ModelChecks, EmptyReductionOrHugeDimensionIsRefused) {
  OnnxModel zero;
  zero.input("X", {4, 0});
  zero.weight("W", {0, 8});
  zero.node("MatMul", {"X", "W"}, {"Y"}, "mm");
  zero.output("Y");
  expect_refused(zero, "k0", {"node 'mm' (#0, MatMul)", "empty dimension"});

  OnnxModel huge;
  huge.input("X", {1, int64_t{1} << 31});
  huge.input("W", {int64_t{1} << 31, 1});
  huge.node("MatMul", {"X", "W"}, {"Y"}, "mm");
  huge.output("Y");
  expect_refused(huge, "k2e31", {"node 'mm' (#0, MatMul)", "shape too large"});
}

TEST(ModelChecks, GraphWithoutNodesOrWithABadOutputIsRefused) {
  OnnxModel empty;
  empty.input("X", {1, 4});
  empty.output("X");
  expect_refused(empty, "no_nodes", {"the graph has no nodes"});

  OnnxModel passthrough;
  passthrough.input("X", {1, 4});
  passthrough.node("Relu", {"X"}, {"Y"}, "r");
  passthrough.output("Y");
  passthrough.output("X");
  expect_refused(passthrough, "output_is_input", {"graph output 'X' is a graph input"});

  OnnxModel nowhere;
  nowhere.input("X", {1, 4});
  nowhere.node("Relu", {"X"}, {"Y"}, "r");
  nowhere.output("Y");
  nowhere.output("Z");
  expect_refused(nowhere, "output_nowhere", {"graph output 'Z' names no tensor"});
}

}  // namespace
}  // namespace kiln
