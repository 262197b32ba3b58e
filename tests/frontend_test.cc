// frontend/: ONNX import, constant folding, the node -> workload mapping and task extraction.
#include <gtest/gtest.h>

#include <string>

#include "frontend/onnx_import.h"
#include "frontend/shape_arith.h"
#include "frontend/task_extraction.h"
#include "tests/onnx_models.h"
#include "tests/tasks_txt.h"

namespace kiln {
namespace {

using frontend::Graph;
using frontend::import_onnx;
using frontend::ModelTask;
using frontend::TaskExtraction;
using testing::OnnxModel;

Graph must_import(const std::string& path, const frontend::ImportOptions& options = {}) {
  Result<Graph> g = import_onnx(path, options);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(g).value() : Graph{};
}

// (template, workload) of every extracted task.
std::map<std::pair<std::string, std::string>, const ModelTask*> by_key(const TaskExtraction& e) {
  std::map<std::pair<std::string, std::string>, const ModelTask*> out;
  for (const ModelTask& t : e.tasks)
    out[{std::string(t.tmpl->name()), t.workload.to_string()}] = &t;
  return out;
}

void expect_matches_tasks_txt(const std::string& model, size_t tvm_tasks) {
  SCOPED_TRACE(model);
  testing::TasksTxt expected = testing::read_tasks_txt(model);
  Graph graph = must_import(testing::model_path(model));
  TaskExtraction e = frontend::extract_tasks(graph);
  EXPECT_TRUE(e.not_tunable.empty()) << e.not_tunable.front();
  EXPECT_EQ(e.workloads, expected.distinct_workloads);
  EXPECT_EQ(e.tasks.size(), tvm_tasks);
  ASSERT_EQ(e.tasks.size(), expected.tasks.size());
  auto actual = by_key(e);
  for (const auto& [key, want] : expected.tasks) {
    auto it = actual.find(key);
    ASSERT_NE(it, actual.end()) << "missing task " << key.first << " " << key.second;
    EXPECT_EQ(it->second->count, want.count) << key.second;
    EXPECT_EQ(it->second->flops, want.flops) << key.second;
    EXPECT_EQ(it->second->space_size, it->second->tmpl->space(it->second->workload).size());
    EXPECT_EQ(static_cast<int64_t>(it->second->nodes.size()), want.count);
  }
}

TEST(FrontendTasks, SharedModelsMatchTasksTxt) {
  expect_matches_tasks_txt("resnet18", 13);      // 12 workloads; the dense layer is two tasks
  expect_matches_tasks_txt("mobilenet_v2", 32);  // 31 workloads
  expect_matches_tasks_txt("mlp", 6);            // 3 dense workloads, two templates each
}

TEST(FrontendImport, SharedModelHasStaticShapesAndWeights) {
  Graph g = must_import(testing::model_path("mobilenet_v2"));
  EXPECT_EQ(g.opset, 13);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.inputs[0]).shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(g.tensor(g.outputs[0]).shape, (std::vector<int64_t>{1, 1000}));
  // Its 70 Constant nodes (Clip bounds) became constants.
  for (const frontend::Node& n : g.nodes) EXPECT_NE(n.op_type, "Constant") << n.describe();
  const frontend::Node& first_conv = g.nodes.front();
  ASSERT_EQ(first_conv.op_type, "Conv");
  const frontend::Tensor& w = g.tensor(first_conv.inputs[1]);
  EXPECT_TRUE(w.is_constant);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{32, 3, 3, 3}));
  EXPECT_EQ(static_cast<int64_t>(w.f32.size()), w.num_elements());
}

// X [N,3,4,4] -> Reshape(X, Concat(Unsqueeze(Gather(Shape(X), 0)), [-1])) -> MatMul(W [48,10]),
// as exporters write x.view(x.size(0), -1).
OnnxModel reshape_chain_model(int64_t opset, int64_t batch) {
  OnnxModel m(opset);
  m.input("X", {batch, 3, 4, 4});
  m.ints("zero", {}, {0});
  m.ints("minus_one", {1}, {-1});
  m.weight("W", {48, 10});
  m.node("Shape", {"X"}, {"shape"}, "shape");
  OnnxModel::attr(m.node("Gather", {"shape", "zero"}, {"batch"}, "gather"), "axis", int64_t{0});
  if (opset >= 13) {
    m.ints("axes", {1}, {0});
    m.node("Unsqueeze", {"batch", "axes"}, {"batch1"}, "unsqueeze");
  } else {
    OnnxModel::attr(m.node("Unsqueeze", {"batch"}, {"batch1"}, "unsqueeze"), "axes",
                    std::vector<int64_t>{0});
  }
  OnnxModel::attr(m.node("Concat", {"batch1", "minus_one"}, {"target"}, "concat"), "axis",
                  int64_t{0});
  m.node("Reshape", {"X", "target"}, {"flat"}, "reshape");
  m.node("MatMul", {"flat", "W"}, {"Y"}, "matmul");
  m.output("Y");
  return m;
}

TEST(FrontendImport, FoldsShapeGatherUnsqueezeConcatIntoReshapeConstant) {
  for (int64_t opset : {11, 13, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    Graph g = must_import(reshape_chain_model(opset, 1).write("fold" + std::to_string(opset)));
    ASSERT_EQ(g.nodes.size(), 2u);  // the shape arithmetic is gone
    EXPECT_EQ(g.nodes[0].op_type, "Reshape");
    EXPECT_EQ(g.nodes[0].index, 4);  // indices stay those of the file
    const frontend::Tensor& target = g.tensor(g.nodes[0].inputs[1]);
    EXPECT_TRUE(target.is_constant);
    EXPECT_EQ(target.i64, (std::vector<int64_t>{1, -1}));
    EXPECT_EQ(g.tensor("flat").shape, (std::vector<int64_t>{1, 48}));
    EXPECT_EQ(g.tensor("Y").shape, (std::vector<int64_t>{1, 10}));
    TaskExtraction e = frontend::extract_tasks(g);
    ASSERT_EQ(e.tasks.size(), 2u);
    EXPECT_EQ(e.tasks[0].workload.to_string(), "dense:K=48,M=1,N=10,bias=0");
  }
}

TEST(FrontendImport, InputShapeFixesSymbolicBatchBeforeFolding) {
  std::string path = reshape_chain_model(13, -1).write("symbolic");
  Result<Graph> missing = import_onnx(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("symbolic dimension 'N' at axis 0"), std::string::npos)
      << missing.status().message();

  Graph g = must_import(path, {{{"X", {3, 3, 4, 4}}}});
  EXPECT_EQ(g.tensor(g.nodes[0].inputs[1]).i64, (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(g.tensor("Y").shape, (std::vector<int64_t>{3, 10}));

  Result<Graph> wrong_rank = import_onnx(path, {{{"X", {3, 48}}}});
  ASSERT_FALSE(wrong_rank.ok());
  EXPECT_NE(wrong_rank.status().message().find("rank 4"), std::string::npos);
  Result<Graph> contradicts = import_onnx(path, {{{"X", {3, 5, 4, 4}}}});
  ASSERT_FALSE(contradicts.ok());
  EXPECT_NE(contradicts.status().message().find("size 3 at axis 1"), std::string::npos);
  Result<Graph> unknown = import_onnx(path, {{{"X", {3, 3, 4, 4}}, {"Z", {1}}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'Z', which is not an input"), std::string::npos);
}

// What kiln does not support in a valid model is kUnimplemented (a limitation: the ONNX
// conformance suite reports such a test as not run); a broken input is kInvalidArgument.
TEST(FrontendImport, UnsupportedFeaturesAreUnimplementedBadInputIsInvalid) {
  testing::OnnxModel sine;
  sine.input("X", {1, 4});
  sine.node("Sin", {"X"}, {"Y"});
  sine.output("Y");
  testing::OnnxModel float64;
  float64.input("X", {1, 4}, onnx::TensorProto::DOUBLE);
  float64.node("Relu", {"X"}, {"Y"});
  float64.output("Y", onnx::TensorProto::DOUBLE);
  testing::OnnxModel dynamic_reshape;
  dynamic_reshape.input("X", {2, 6});
  dynamic_reshape.input("target", {2}, onnx::TensorProto::INT64);
  dynamic_reshape.node("Reshape", {"X", "target"}, {"Y"});
  dynamic_reshape.output("Y");
  testing::OnnxModel opset18(18);
  opset18.input("X", {1, 4});
  opset18.node("Relu", {"X"}, {"Y"});
  opset18.output("Y");
  for (auto* m : {&sine, &float64, &dynamic_reshape, &opset18}) {
    Result<Graph> g = import_onnx(m->write("unimplemented"));
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kUnimplemented) << g.status().message();
  }

  testing::OnnxModel symbolic;
  symbolic.input("X", {-1, 4});
  symbolic.node("Relu", {"X"}, {"Y"});
  symbolic.output("Y");
  for (const std::string& path :
       {symbolic.write("symbolic"), testing::OnnxModel::temp_path("no_such_model.onnx")}) {
    Result<Graph> g = import_onnx(path);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << g.status().message();
  }
}

TEST(FrontendImport, ParsesInputShapes) {
  auto ok = frontend::parse_input_shape("input.1=1x3x224x224");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->first, "input.1");
  EXPECT_EQ(ok->second, (std::vector<int64_t>{1, 3, 224, 224}));
  for (const char* bad : {"input", "=1x3", "x=", "x=1x", "x=0x3", "x=1x-3", "x=1.5"}) {
    EXPECT_FALSE(frontend::parse_input_shape(bad).ok()) << bad;
  }
}

frontend::Tensor ints(std::vector<int64_t> shape, std::vector<int64_t> values) {
  frontend::Tensor t;
  t.dtype = frontend::DType::kInt64;
  t.shape = std::move(shape);
  t.i64 = std::move(values);
  t.is_constant = true;
  return t;
}

TEST(FrontendShapeArith, EvaluatesExporterShapeOps) {
  frontend::Node slice{"Slice", "s", 0, {"d", "b", "e", "a"}, {"o"}, {}};
  frontend::Tensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  frontend::Tensor starts = ints({1}, {-2}), ends = ints({1}, {INT64_MAX}), axes = ints({1}, {1});
  Result<frontend::Tensor> r = frontend::evaluate_int64(slice, {&data, &starts, &ends, &axes}, 13);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r->i64, (std::vector<int64_t>{2, 3, 5, 6}));

  frontend::Node gather{"Gather", "g", 1, {"d", "i"}, {"o"}, {{"axis", int64_t{1}}}};
  frontend::Tensor index = ints({}, {-1});
  r = frontend::evaluate_int64(gather, {&data, &index}, 13);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(r->i64, (std::vector<int64_t>{3, 6}));
  index = ints({}, {3});
  r = frontend::evaluate_int64(gather, {&data, &index}, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node 'g' (#1, Gather)"), std::string::npos);

  frontend::Node div{"Div", "d", 2, {"a", "b"}, {"o"}, {}};
  frontend::Tensor row = ints({1, 3}, {2, 0, 7});
  r = frontend::evaluate_int64(div, {&data, &row}, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos);
  frontend::Node mul{"Mul", "m", 3, {"a", "b"}, {"o"}, {}};
  r = frontend::evaluate_int64(mul, {&data, &row}, 13);  // broadcast [2,3] * [1,3]
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->i64, (std::vector<int64_t>{2, 0, 21, 8, 0, 42}));
}

// One stride-2 Conv on X [1,C,hw,hw] with weight [K, C/group, 3, 3]; returns the extraction.
TaskExtraction conv_tasks(int64_t c, int64_t k, int64_t group, std::vector<int64_t> pads,
                          const std::string& auto_pad = "", int64_t hw = 8) {
  OnnxModel m;
  m.input("X", {1, c, hw, hw});
  m.weight("W", {k, c / group, 3, 3});
  onnx::NodeProto* conv = m.node("Conv", {"X", "W"}, {"Y"}, "conv");
  OnnxModel::attr(conv, "group", group);
  OnnxModel::attr(conv, "strides", std::vector<int64_t>{2, 2});
  if (auto_pad.empty()) {
    OnnxModel::attr(conv, "pads", pads);
  } else {
    OnnxModel::attr(conv, "auto_pad", auto_pad);
  }
  m.output("Y");
  Graph g = must_import(m.write("conv"));
  return frontend::extract_tasks(g);
}

TEST(FrontendWorkloads, ConvolutionsMapToConv2dDepthwiseOrGroupedOrAreReported) {
  TaskExtraction e = conv_tasks(8, 16, 1, {1, 1, 1, 1});
  ASSERT_EQ(e.tasks.size(), 1u);
  EXPECT_EQ(e.tasks[0].workload.to_string(),
            "conv2d:C=8,H=8,K=16,N=1,R=3,S=3,W=8,dilation=1,groups=1,pad=1,stride=2");

  e = conv_tasks(8, 8, 8, {1, 1, 1, 1});
  ASSERT_EQ(e.tasks.size(), 1u);
  EXPECT_EQ(e.tasks[0].tmpl->name(), "depthwise_conv2d_NCHWc.x86");
  EXPECT_EQ(e.tasks[0].workload.to_string(),
            "depthwise_conv2d:C=8,H=8,N=1,R=3,S=3,W=8,dilation=1,pad=1,stride=2");

  // SAME_UPPER on 7 pads 1 on both sides.
  e = conv_tasks(8, 16, 1, {}, "SAME_UPPER", 7);
  ASSERT_EQ(e.tasks.size(), 1u) << (e.not_tunable.empty() ? "" : e.not_tunable[0]);
  EXPECT_EQ(e.tasks[0].workload.at("pad"), 1);
  // Padding 1 after on 9 is never read with stride 2 (the output is 4x4 either way): exactly
  // conv2d pad=0.
  e = conv_tasks(8, 16, 1, {0, 0, 1, 1}, "", 9);
  ASSERT_EQ(e.tasks.size(), 1u) << (e.not_tunable.empty() ? "" : e.not_tunable[0]);
  EXPECT_EQ(e.tasks[0].workload.at("pad"), 0);
  // SAME_UPPER on 8 pads 0 before and 1 after, which the last output row reads: kiln cannot
  // express it, and says so.
  e = conv_tasks(8, 16, 1, {}, "SAME_UPPER", 8);
  EXPECT_TRUE(e.tasks.empty());
  ASSERT_EQ(e.not_tunable.size(), 1u);
  EXPECT_NE(e.not_tunable[0].find("node 'conv' (#0, Conv): asymmetric padding of the height (0 "
                                  "before, 1 after)"),
            std::string::npos)
      << e.not_tunable[0];

  // Other groups are grouped convolutions (TVM's group_conv2d_nchw.x86).
  e = conv_tasks(8, 16, 4, {1, 1, 1, 1});
  ASSERT_EQ(e.tasks.size(), 1u) << (e.not_tunable.empty() ? "" : e.not_tunable[0]);
  EXPECT_EQ(e.tasks[0].tmpl->name(), "group_conv2d_nchw.x86");
  EXPECT_EQ(e.tasks[0].workload.to_string(),
            "group_conv2d:C=8,H=8,K=16,N=1,R=3,S=3,W=8,dilation=1,groups=4,pad=1,stride=2");
}

TEST(FrontendWorkloads, MatMulOnAWeightIsDenseOnActivationsBatchMatmul) {
  OnnxModel m;
  m.input("A", {2, 5, 16});  // [batch, rows, K]
  m.input("B", {2, 16, 7});
  m.weight("W", {16, 32});
  m.weight("G", {24, 16});  // Gemm weight, transposed
  m.weight("bias", {24});
  m.node("MatMul", {"A", "W"}, {"dense_out"}, "dense");  // dense M=10, N=32, K=16
  m.node("MatMul", {"A", "B"}, {"bmm_out"}, "bmm");      // batch_matmul B=2, M=5, N=7
  m.input("G_in", {3, 16});
  onnx::NodeProto* gemm = m.node("Gemm", {"G_in", "G", "bias"}, {"gemm_out"}, "gemm");
  OnnxModel::attr(gemm, "transB", int64_t{1});
  m.output("dense_out");
  m.output("bmm_out");
  m.output("gemm_out");
  TaskExtraction e = frontend::extract_tasks(must_import(m.write("matmul")));
  ASSERT_TRUE(e.not_tunable.empty()) << e.not_tunable[0];
  std::vector<std::string> got;
  for (const ModelTask& t : e.tasks)
    got.push_back(std::string(t.tmpl->name()) + " " + t.workload.to_string());
  EXPECT_EQ(got, (std::vector<std::string>{
                     "dense_nopack.x86 dense:K=16,M=10,N=32,bias=0",
                     "dense_pack.x86 dense:K=16,M=10,N=32,bias=0",
                     "batch_matmul.x86 batch_matmul:B=2,K=16,M=5,N=7",
                     "dense_nopack.x86 dense:K=16,M=3,N=24,bias=0",  // TVM's task: no bias
                     "dense_pack.x86 dense:K=16,M=3,N=24,bias=0",
                 }));
  EXPECT_EQ(e.workloads, 3);
  EXPECT_EQ(e.tunable_nodes, 3);
}

}  // namespace
}  // namespace kiln
