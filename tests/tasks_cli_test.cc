// End to end: `kiln tasks` on the shared models and on bad inputs, through the real binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/onnx_models.h"
#include "tests/run_kiln.h"
#include "tests/tasks_txt.h"

namespace kiln {
namespace {

using testing::CommandResult;
using testing::OnnxModel;

CommandResult kiln(const std::string& args) { return testing::run_kiln(args); }

// Runs `kiln tasks <args>` and expects exit 2 with a one-line message holding every `parts`.
void expect_bad_input(const std::string& args, const std::vector<std::string>& parts) {
  CommandResult r = kiln("tasks " + args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("kiln: ", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  for (const std::string& part : parts) {
    EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in: " << r.output;
  }
}

void expect_json_matches_tasks_txt(const std::string& model, size_t tvm_tasks) {
  SCOPED_TRACE(model);
  CommandResult r = kiln("tasks --json " + testing::model_path(model));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json list = nlohmann::json::parse(r.output);
  ASSERT_TRUE(list.is_array());
  EXPECT_EQ(list.size(), tvm_tasks);
  testing::TasksTxt expected = testing::read_tasks_txt(model);
  EXPECT_EQ(list.size(), expected.tasks.size());
  for (const nlohmann::json& task : list) {
    std::pair<std::string, std::string> key{task.at("template"), task.at("workload")};
    auto it = expected.tasks.find(key);
    ASSERT_NE(it, expected.tasks.end()) << "unexpected task " << task.dump();
    EXPECT_EQ(task.at("count").get<int64_t>(), it->second.count) << task.dump();
    EXPECT_EQ(task.at("flops").get<double>(), it->second.flops) << task.dump();
    // The space size is the one `kiln space` reports for the same task.
    CommandResult space = kiln("space --workload " + key.second + " --template " + key.first);
    ASSERT_EQ(space.exit_code, 0) << space.output;
    std::string want =
        "space size: " + std::to_string(task.at("space_size").get<int64_t>()) + " configs";
    EXPECT_NE(space.output.find(want), std::string::npos) << space.output << task.dump();
    if (model != "mlp") break;  // one `kiln space` run per model keeps the test short
  }
}

TEST(TasksCli, SharedModelsJsonMatchesTasksTxt) {
  expect_json_matches_tasks_txt("resnet18", 13);
  expect_json_matches_tasks_txt("mobilenet_v2", 32);
  expect_json_matches_tasks_txt("mlp", 6);
}

TEST(TasksCli, TextListsTasksWithTotals) {
  CommandResult r =
      kiln("tasks --target 'llvm -mcpu=x86-64-v3' " + testing::model_path("resnet18"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("21 tunable nodes, 12 distinct workloads, 13 tasks, 3.628 GFLOP"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("x86-64-v3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dense_pack.x86"), std::string::npos) << r.output;
  expect_bad_input("--target 'llvm -mcpu=no-such-cpu' " + testing::model_path("mlp"),
                   {"no-such-cpu"});
}

TEST(TasksCli, RejectsAFileThatIsNotOnnx) {
  std::string path = OnnxModel::temp_path("notes.onnx");
  std::ofstream(path) << "these are not the weights you are looking for\n";
  expect_bad_input(path, {path, "not an ONNX model"});
  expect_bad_input(OnnxModel::temp_path("missing.onnx"), {"cannot open model file"});
}

TEST(TasksCli, RejectsATruncatedModel) {
  std::ifstream in(testing::model_path("mlp"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string path = OnnxModel::temp_path("half.onnx");
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_bad_input(path, {path, "truncated"});
}

TEST(TasksCli, RejectsAModelTheCheckerRejects) {
  OnnxModel m;
  m.input("X", {1, 4});
  m.node("Relu", {"X", "X"}, {"Y"}, "relu_with_two_inputs");  // Relu takes one input
  m.output("Y");
  expect_bad_input(m.write("checker"), {"the ONNX checker rejects the model", "Relu"});
}

TEST(TasksCli, RejectsAnUnsupportedOperatorNamingIt) {
  OnnxModel m;
  m.input("X", {1, 4});
  m.node("Relu", {"X"}, {"R"}, "relu");
  m.node("Sin", {"R"}, {"Y"}, "the_sine");
  m.output("Y");
  expect_bad_input(
      m.write("unsupported"),
      {"node 'the_sine' (#1, Sin): unsupported operator Sin",
       "kiln supports: Abs, Add, AveragePool, BatchNormalization", "Conv", "Gemm", "Unsqueeze"});
}

TEST(TasksCli, RejectsAnOpsetNewerThanSeventeen) {
  OnnxModel m(18);
  m.input("X", {1, 4});
  m.node("Relu", {"X"}, {"Y"});
  m.output("Y");
  expect_bad_input(m.write("opset18"), {"opset 18 is not supported", "11 to 17"});
}

// An older opset is upgraded by ONNX's version converter, as ONNX Runtime users expect.
TEST(TasksCli, UpgradesAnOpsetOlderThanEleven) {
  OnnxModel m(9);
  m.input("X", {1, 4});
  m.node("Relu", {"X"}, {"Y"});
  m.output("Y");
  CommandResult r = kiln("tasks " + m.write("opset9"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 tasks"), std::string::npos) << r.output;
}

TEST(TasksCli, RejectsANonFloat32ComputePath) {
  OnnxModel m;
  m.input("X", {1, 4}, onnx::TensorProto::DOUBLE);
  m.node("Relu", {"X"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::DOUBLE);
  expect_bad_input(m.write("float64"),
                   {"node 'relu' (#0, Relu)", "'Y' is float64", "float32 only"});
}

TEST(TasksCli, RejectsAShapeThatCannotBeInferred) {
  OnnxModel m;
  m.input("X", {2, 6});
  m.input("target", {2}, onnx::TensorProto::INT64);  // a shape known only at run time
  m.node("Reshape", {"X", "target"}, {"Y"}, "reshape");
  m.output("Y");
  expect_bad_input(m.write("dynamic_reshape"),
                   {"node 'reshape' (#0, Reshape)", "'Y' cannot be inferred statically"});
}

TEST(TasksCli, SymbolicBatchNeedsInputShape) {
  OnnxModel m;
  m.input("X", {-1, 16});
  m.weight("W", {8, 16});
  m.weight("b", {8});
  onnx::NodeProto* gemm = m.node("Gemm", {"X", "W", "b"}, {"Y"}, "fc");
  OnnxModel::attr(gemm, "transB", int64_t{1});
  m.output("Y");
  std::string path = m.write("symbolic_batch");
  expect_bad_input(path, {"input 'X' has a symbolic dimension 'N' at axis 0", "--input-shape X="});

  CommandResult r = kiln("tasks --json --input-shape X=4x16 " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json list = nlohmann::json::parse(r.output);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].at("workload"), "dense:K=16,M=4,N=8,bias=0");  // TVM's task: no bias
  EXPECT_EQ(list[0].at("count"), 1);
  EXPECT_EQ(list[0].at("flops"), 2.0 * 4 * 8 * 16);

  expect_bad_input("--input-shape X=4 " + path, {"rank 2"});
  expect_bad_input("--input-shape X=4by16 " + path, {"'4by16' is not a dimension"});
  expect_bad_input("--input-shape X=4x16 --input-shape Z=1 " + path,
                   {"'Z', which is not an input of the model (its inputs: 'X')"});
}

TEST(TasksCli, InputShapeRepeatsForSeveralInputs) {
  OnnxModel m;
  m.input("A", {-1, 16});
  m.input("B", {-1, 16});
  m.weight("W", {16, 8});
  m.node("Add", {"A", "B"}, {"S"}, "add");
  m.node("MatMul", {"S", "W"}, {"Y"}, "fc");
  m.output("Y");
  std::string path = m.write("two_inputs");
  for (const std::string& args : {"--input-shape A=2x16 --input-shape B=2x16 " + path,
                                  path + " --input-shape A=2x16 --input-shape B=2x16"}) {
    CommandResult r = kiln("tasks --json " + args);
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_EQ(nlohmann::json::parse(r.output)[0].at("workload"), "dense:K=16,M=2,N=8,bias=0");
  }
  expect_bad_input("--input-shape A=2x16 " + path, {"input 'B' has a symbolic dimension"});
  expect_bad_input("--input-shape A=2x16 --input-shape A=3x16 " + path,
                   {"'A' is given more than once"});
}

TEST(TasksCli, ReportsAConvItCannotTuneAndListsTheRest) {
  OnnxModel m;
  m.input("X", {1, 8, 8, 8});
  m.weight("W", {16, 8, 3, 3});
  m.weight("V", {4, 16, 1, 1});
  // Dilations that differ per axis: no kiln conv workload has two.
  OnnxModel::attr(m.node("Conv", {"X", "W"}, {"G"}, "dilated"), "dilations",
                  std::vector<int64_t>{1, 2});
  m.node("Conv", {"G", "V"}, {"Y"}, "pointwise");
  m.output("Y");
  CommandResult r = kiln("tasks " + m.write("dilated"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: not tunable, left out of the tasks: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("node 'dilated' (#0, Conv): dilations"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("differ per axis"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 tunable nodes, 1 distinct workloads, 1 tasks"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace kiln
