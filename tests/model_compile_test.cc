// Compiled models end to end: the shared models (ResNet-18, MobileNetV2, an MLP) compiled with
// fallback configs and with tuned records match their reference output; BatchNormalization folding
// and epilogue fusion are exact; `kiln compile` / `kiln run` work as a user types them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "builder/target.h"
#include "compiler/compile_model.h"
#include "exchange/target_description.h"
#include "frontend/onnx_import.h"
#include "frontend/task_extraction.h"
#include "ops/registry.h"
#include "runtime/graph_executor.h"
#include "store/open_store.h"
#include "tests/max_error.h"
#include "tests/onnx_models.h"
#include "tests/run_kiln.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(KILN_SHARED_DIR) / "models";

std::vector<float> read_floats(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<float> data(fs::file_size(path) / sizeof(float));
  f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size() * 4));
  return data;
}

// max |y - ref| / max |ref|, the measure.
double relative_error(std::span<const float> y, const std::vector<float>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err = testing::max_error(err, std::abs(static_cast<double>(y[i]) - ref[i]));
    scale = std::max(scale, std::abs(static_cast<double>(ref[i])));
  }
  return err / scale;
}

// `size` floats drawn uniformly from [-1, 1).
std::vector<float> uniform_floats(std::mt19937& rng, size_t size) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(size);
  for (float& x : v) x = u(rng);
  return v;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-model-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

struct RunResult {
  compiler::CompileReport report;
  std::vector<float> output;
  std::vector<float> output_two_threads;
};

RunResult compile_and_run(const std::string& model, store::Store* db = nullptr) {
  RunResult result;
  fs::path dir = kModels / model;
  Result<frontend::Graph> graph = frontend::import_onnx((dir / (model + ".onnx")).string());
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  if (!graph.ok()) return result;
  compiler::CompileOptions options;
  options.store = db;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, options, &result.report);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return result;
  Result<std::unique_ptr<GraphExecutor>> exec = GraphExecutor::create(*artifact, 1, model);
  EXPECT_TRUE(exec.ok()) << exec.status().message();
  if (!exec.ok()) return result;
  std::vector<float> input = read_floats(dir / "input.bin");
  EXPECT_TRUE((*exec)->set_input((*exec)->input_info(0).name, input).ok());
  (*exec)->run();
  std::span<const float> out = (*exec)->get_output(0);
  result.output.assign(out.begin(), out.end());
  (*exec)->set_threads(2);
  (*exec)->run();
  out = (*exec)->get_output(0);
  result.output_two_threads.assign(out.begin(), out.end());
  return result;
}

// A successful record of config `index` of the task, costing `seconds`.
store::Record test_record(const Target& host, const frontend::ModelTask& t, const ops::Workload& w,
                          const ConfigSpace& space, int64_t index, double seconds) {
  store::Record r;
  r.target = host.to_string();
  r.task_name = std::string(t.tmpl->name());
  r.workload = w.to_string();
  r.config_index = index;
  r.entities = space.get(index).to_json()["entity"];
  r.costs = {seconds};
  r.timestamp = 1700000000;
  r.flop = t.flops;
  r.source = "test";
  return r;
}

class SharedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModel, FallbackConfigsMatchTheReferenceOutput) {
  if (!fs::exists(kModels))
    GTEST_SKIP() << "no " << kModels << " (../shared is not beside the repo)";
  const std::string model = GetParam();
  RunResult r = compile_and_run(model);
  std::vector<float> ref = read_floats(kModels / model / "output.bin");
  ASSERT_EQ(r.output.size(), ref.size());
  EXPECT_LE(relative_error(r.output, ref), 1e-4);
  EXPECT_LE(relative_error(r.output_two_threads, ref), 1e-4);
  EXPECT_GT(r.report.untuned_tasks, 0);
  EXPECT_EQ(r.report.untuned_tasks, static_cast<int>(r.report.tasks.size()));
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModel, ::testing::Values("resnet18", "mobilenet_v2", "mlp"));

// A store holding records (not the fallback configs) for some of ResNet-18's tasks: the compile
// uses them, says which tasks are tuned, and the output is still right.
TEST(CompiledModel, TunedRecordsAreUsedAndStayCorrect) {
  if (!fs::exists(kModels)) GTEST_SKIP() << "no " << kModels;
  TempDir dir;
  std::string db_path = (dir / "tuned.db").string();
  Result<frontend::Graph> graph =
      frontend::import_onnx((kModels / "resnet18" / "resnet18.onnx").string());
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  frontend::TaskExtraction extraction = frontend::extract_tasks(*graph);
  Target host = builder::host_target();
  ops::TargetInfo info = describe(host).template_info();
  std::vector<store::Record> records;
  std::mt19937_64 rng(7);
  int conv_tasks = 0;
  for (const frontend::ModelTask& t : extraction.tasks) {
    bool wanted = t.tmpl->name() == "dense_pack.x86" ||
                  (t.tmpl->name() == "conv2d_NCHWc.x86" && conv_tasks++ < 3);
    if (!wanted) continue;
    ops::Workload w = *t.tmpl->normalize(t.workload);
    ConfigSpace space = t.tmpl->space(w);
    ConfigEntity untuned = t.tmpl->default_config(w, space, info);
    // A random config other than the default, so the compile visibly takes it.
    int64_t index = untuned.index();
    while (index == untuned.index()) index = space.nth_valid_index(rng() % space.size());
    records.push_back(test_record(host, t, w, space, index, 1e-3));
  }
  ASSERT_EQ(records.size(), 4u);
  {
    auto db = store::open_store(db_path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)->append(records).ok());
  }
  auto db = store::open_store(db_path, /*read_only=*/true);
  ASSERT_TRUE(db.ok());
  RunResult r = compile_and_run("resnet18", db->get());
  int tuned = 0;
  for (const compiler::CompiledTask& t : r.report.tasks) tuned += t.tuned;
  EXPECT_EQ(tuned, 4);
  EXPECT_EQ(r.report.untuned_tasks, static_cast<int>(r.report.tasks.size()) - 4);
  std::vector<float> ref = read_floats(kModels / "resnet18" / "output.bin");
  ASSERT_EQ(r.output.size(), ref.size());
  EXPECT_LE(relative_error(r.output, ref), 1e-4);
}

// Several records per conv workload, of random configs (so random activation blocks): the layout
// plan chooses among them across the graph, every conv's data arrives in whatever block its
// producer's choice writes, and the output still matches the reference.
TEST(CompiledModel, PlannedLayoutsOverSeveralRecordsPerWorkloadStayCorrect) {
  if (!fs::exists(kModels)) GTEST_SKIP() << "no " << kModels;
  for (const std::string model : {"mobilenet_v2", "resnet18"}) {
    SCOPED_TRACE(model);
    TempDir dir;
    std::string db_path = (dir / "tuned.db").string();
    Result<frontend::Graph> graph =
        frontend::import_onnx((kModels / model / (model + ".onnx")).string());
    ASSERT_TRUE(graph.ok()) << graph.status().message();
    frontend::TaskExtraction extraction = frontend::extract_tasks(*graph);
    Target host = builder::host_target();
    std::vector<store::Record> records;
    std::mt19937_64 rng(3);
    for (const frontend::ModelTask& t : extraction.tasks) {
      if (t.tmpl->op() != "conv2d" && t.tmpl->op() != "depthwise_conv2d") continue;
      ops::Workload w = *t.tmpl->normalize(t.workload);
      ConfigSpace space = t.tmpl->space(w);
      for (int i = 0; i < 4; ++i) {
        int64_t index = space.nth_valid_index(rng() % space.size());
        double cost = 1e-5 * static_cast<double>(1 + rng() % 100);
        records.push_back(test_record(host, t, w, space, index, cost));
      }
    }
    {
      auto db = store::open_store(db_path);
      ASSERT_TRUE(db.ok()) << db.status().message();
      ASSERT_TRUE((*db)->append(records).ok());
    }
    auto db = store::open_store(db_path, /*read_only=*/true);
    ASSERT_TRUE(db.ok());
    RunResult r = compile_and_run(model, db->get());
    EXPECT_TRUE(r.report.planned);
    EXPECT_GT(r.report.plan_kernel_seconds, 0);
    EXPECT_EQ(r.report.plan_unmeasured_kernels, 0);
    EXPECT_NE(r.report.transform_costs.find("measured"), std::string::npos)
        << r.report.transform_costs;
    std::vector<float> ref = read_floats(kModels / model / "output.bin");
    ASSERT_EQ(r.output.size(), ref.size());
    EXPECT_LE(relative_error(r.output, ref), 1e-4);
    EXPECT_LE(relative_error(r.output_two_threads, ref), 1e-4);
    // `kiln compile` prints the plan and what it estimates.
    testing::CommandResult cli =
        testing::run_kiln("compile " + (kModels / model / (model + ".onnx")).string() + " --db " +
                          db_path + " -o " + (dir / "model.kiln").string());
    ASSERT_EQ(cli.exit_code, 0) << cli.output;
    EXPECT_NE(cli.output.find("layout plan: conv kernels "), std::string::npos) << cli.output;
    // The kernels' times are records at the model's thread count, not one thread's.
    EXPECT_NE(cli.output.find("(their records, preferably timed at "), std::string::npos)
        << cli.output;
    EXPECT_NE(cli.output.find("block conversions between them"), std::string::npos) << cli.output;
    EXPECT_NE(cli.output.find("layout transforms remain"), std::string::npos) << cli.output;
  }
}

// A residual Add read by a conv that writes another block than the Add's producer: the producer's
// output is copied once into the consumer's block (a "layout NCHW8c -> NCHW16c" step, not an NCHW
// copy read lane by lane in the epilogue), and the result equals a direct computation.
//   a = Conv1x1(x) (16 -> 32, writes NCHW8c), b = Conv1x1(a) + a (32 -> 32, writes NCHW16c),
//   y = Conv1x1(b) (32 -> 16)
TEST(CompiledModel, AResidualInAnotherBlockIsCopiedIntoTheBlockItIsAddedIn) {
  const int64_t c = 16, k = 32, h = 6, w = 5;
  testing::OnnxModel m;
  m.input("x", {1, c, h, w});
  std::mt19937 rng(5);
  auto random = [&](size_t size) { return uniform_floats(rng, size); };
  std::vector<float> w1 = random(k * c), w2 = random(k * k), w3 = random(c * k);
  m.floats("W1", {k, c, 1, 1}, w1);
  m.floats("W2", {k, k, 1, 1}, w2);
  m.floats("W3", {c, k, 1, 1}, w3);
  m.node("Conv", {"x", "W1"}, {"a"});
  m.node("Conv", {"a", "W2"}, {"conv2"});
  m.node("Add", {"conv2", "a"}, {"b"});
  m.node("Conv", {"b", "W3"}, {"y"});
  m.output("y");
  std::string path = m.write("residual_blocks");
  Result<frontend::Graph> graph = frontend::import_onnx(path);
  ASSERT_TRUE(graph.ok()) << graph.status().message();

  // Records fast enough to win the plan: the first conv writes block 8, the second reads 8 and
  // writes 16, the third reads 16.
  const std::map<std::string, std::pair<int64_t, int64_t>> blocks = {
      {"C=16,H=6,K=32", {16, 8}}, {"C=32,H=6,K=32", {8, 16}}, {"C=32,H=6,K=16", {16, 16}}};
  Target host = builder::host_target();
  std::vector<store::Record> records;
  for (const frontend::ModelTask& t : frontend::extract_tasks(*graph).tasks) {
    if (t.tmpl->name() != "conv2d_NCHWc.x86") continue;
    ops::Workload wl = *t.tmpl->normalize(t.workload);
    const std::string text = wl.to_string();
    auto it = std::find_if(blocks.begin(), blocks.end(),
                           [&](const auto& b) { return text.find(b.first) != std::string::npos; });
    ASSERT_NE(it, blocks.end()) << text;
    auto [ic_bn, oc_bn] = it->second;
    const int64_t cin = wl.at("C"), cout = wl.at("K");
    ConfigSpace space = t.tmpl->space(wl);
    Result<ConfigEntity> config =
        space.make_config({{"tile_ic", SplitEntity{{cin / ic_bn, ic_bn}}},
                           {"tile_oc", SplitEntity{{cout / oc_bn, oc_bn}}},
                           {"tile_ow", SplitEntity{{1, w}}},
                           {"tile_oh", OtherOptionEntity{1}}});
    ASSERT_TRUE(config.ok()) << config.status().message();
    records.push_back(test_record(host, t, wl, space, config->index(), 1e-9));
  }
  ASSERT_EQ(records.size(), 3u);
  TempDir dir;
  const std::string db_path = (dir / "tuned.db").string();
  {
    auto db = store::open_store(db_path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)->append(records).ok());
  }
  auto db = store::open_store(db_path, /*read_only=*/true);
  ASSERT_TRUE(db.ok());
  compiler::CompileOptions options;
  options.store = db->get();
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  int repacks = 0;
  for (const ModelStep& step : artifact->steps) {
    EXPECT_EQ(step.label.find("-> NCHW of"), std::string::npos) << step.label;
    repacks += step.label == "layout NCHW8c -> NCHW16c of a";
  }
  EXPECT_EQ(repacks, 1);

  std::vector<float> x = random(c * h * w);
  std::vector<double> a(k * h * w), b(k * h * w), y(c * h * w);
  auto conv = [&](const std::vector<float>& weight, int64_t cin, int64_t cout, auto in, auto out) {
    for (int64_t o = 0; o < cout; ++o) {
      for (int64_t p = 0; p < h * w; ++p) {
        double acc = 0;
        for (int64_t i = 0; i < cin; ++i) acc += weight[o * cin + i] * in(i * h * w + p);
        out(o * h * w + p, acc);
      }
    }
  };
  conv(
      w1, c, k, [&](int64_t i) { return double{x[i]}; }, [&](int64_t i, double v) { a[i] = v; });
  conv(
      w2, k, k, [&](int64_t i) { return a[i]; }, [&](int64_t i, double v) { b[i] = v + a[i]; });
  conv(
      w3, k, c, [&](int64_t i) { return b[i]; }, [&](int64_t i, double v) { y[i] = v; });
  for (int threads : {1, 2}) {
    auto exec = GraphExecutor::create(*artifact, threads);
    ASSERT_TRUE(exec.ok()) << exec.status().message();
    ASSERT_TRUE((*exec)->set_input("x", x).ok());
    (*exec)->run();
    std::span<const float> out = (*exec)->get_output(0);
    ASSERT_EQ(out.size(), y.size());
    double max_err = 0;
    for (size_t i = 0; i < y.size(); ++i) max_err = std::max(max_err, std::abs(out[i] - y[i]));
    EXPECT_LT(max_err, 1e-4) << threads << " threads";
  }
}

// Conv -> BatchNormalization -> Relu -> Add(residual) -> Clip: BN folded into the conv, the three
// elementwise nodes fused into its write-back, and the result equal to a direct computation.
TEST(CompiledModel, FoldsBatchNormAndFusesTheEpilogue) {
  const int64_t n = 1, c = 5, h = 9, w = 11, k = 7;
  testing::OnnxModel m;
  m.input("x", {n, c, h, w});
  m.input("res", {n, k, h, w});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](size_t size, float lo = -1, float hi = 1) {
    std::vector<float> v(size);
    for (float& x : v) x = lo + (hi - lo) * (u(rng) + 1) / 2;
    return v;
  };
  std::vector<float> weight = random(k * c * 9), bias = random(k), gamma = random(k, 0.5f, 2),
                     beta = random(k), mean = random(k), var = random(k, 0.1f, 2);
  m.floats("W", {k, c, 3, 3}, weight);
  m.floats("B", {k}, bias);
  m.floats("gamma", {k}, gamma);
  m.floats("beta", {k}, beta);
  m.floats("mean", {k}, mean);
  m.floats("var", {k}, var);
  m.floats("lo", {}, {0.0f});
  m.floats("hi", {}, {1.5f});
  testing::OnnxModel::attr(m.node("Conv", {"x", "W", "B"}, {"conv"}), "pads",
                           std::vector<int64_t>{1, 1, 1, 1});
  testing::OnnxModel::attr(
      m.node("BatchNormalization", {"conv", "gamma", "beta", "mean", "var"}, {"bn"}), "epsilon",
      1e-3f);
  m.node("Relu", {"bn"}, {"relu"});
  m.node("Add", {"relu", "res"}, {"sum"});
  m.node("Clip", {"sum", "lo", "hi"}, {"y"});
  m.output("y");
  std::string path = m.write("fused");

  Result<frontend::Graph> graph = frontend::import_onnx(path);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  compiler::CompileReport report;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, {}, &report);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(report.fused_nodes, 4);  // BN folded; Relu, Add, Clip fused
  for (const ModelStep& step : artifact->steps) {
    EXPECT_EQ(step.label.find("Relu"), std::string::npos) << "a kernel of its own: " << step.label;
  }
  auto exec = GraphExecutor::create(*artifact);
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  std::vector<float> x = random(n * c * h * w), res = random(n * k * h * w);
  ASSERT_TRUE((*exec)->set_input("x", x).ok());
  ASSERT_TRUE((*exec)->set_input("res", res).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);
  double max_err = 0;
  for (int64_t o = 0; o < k; ++o) {
    double s = gamma[o] / std::sqrt(static_cast<double>(var[o]) + 1e-3);
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < w; ++j) {
        double acc = bias[o];
        for (int64_t ci = 0; ci < c; ++ci) {
          for (int64_t r = 0; r < 3; ++r) {
            for (int64_t q = 0; q < 3; ++q) {
              int64_t hi = i + r - 1, wj = j + q - 1;
              if (hi < 0 || hi >= h || wj < 0 || wj >= w) continue;
              acc += static_cast<double>(x[(ci * h + hi) * w + wj]) *
                     weight[((o * c + ci) * 3 + r) * 3 + q];
            }
          }
        }
        double v = std::max(0.0, (acc - mean[o]) * s + beta[o]) + res[(o * h + i) * w + j];
        v = std::clamp(v, 0.0, 1.5);
        max_err = std::max(max_err, std::abs(v - y[(o * h + i) * w + j]));
      }
    }
  }
  EXPECT_LT(max_err, 1e-4);
}

// Conv -> Flatten: the conv writes NCHW[x]c and the view reads NCHW, so the unpack kernel (blocked
// over packed rows, compiler/layout_programs.h) converts it; a width that is not a multiple of the
// SIMD lanes and a batch of two exercise its tails and indices.
// A batched MatMul ([2, 3, 8] x [8, 16]) is a dense kernel over 6 rows whose buffer is [6, 16]:
// its bias Add, the Relu and a residual Add are fused into its write-back all the same, the
// residual read at the tensor's own [2, 3, 16] coordinates.
TEST(CompiledModel, ABatchedMatMulFusesItsEpilogue) {
  testing::OnnxModel m;
  m.input("x", {2, 3, 8});
  m.input("res", {2, 3, 16});
  std::mt19937 rng(4);
  auto random = [&](size_t size) { return uniform_floats(rng, size); };
  const std::vector<float> weight = random(8 * 16), bias = random(16);
  m.floats("W", {8, 16}, weight);
  m.floats("B", {16}, bias);
  m.node("MatMul", {"x", "W"}, {"mm"});
  m.node("Add", {"mm", "B"}, {"biased"});
  m.node("Relu", {"biased"}, {"relu"});
  m.node("Add", {"relu", "res"}, {"y"});
  m.output("y");
  Result<frontend::Graph> graph = frontend::import_onnx(m.write("batched_matmul"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  compiler::CompileReport report;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, {}, &report);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(report.fused_nodes, 3);
  for (const ModelStep& step : artifact->steps) {
    EXPECT_EQ(step.label.find("Add"), std::string::npos) << "a kernel of its own: " << step.label;
  }
  auto exec = GraphExecutor::create(*artifact);
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  const std::vector<float> x = random(2 * 3 * 8), res = random(2 * 3 * 16);
  ASSERT_TRUE((*exec)->set_input("x", x).ok());
  ASSERT_TRUE((*exec)->set_input("res", res).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);
  ASSERT_EQ(y.size(), 2u * 3 * 16);
  double max_err = 0;
  for (int64_t row = 0; row < 6; ++row) {
    for (int64_t o = 0; o < 16; ++o) {
      double acc = bias[o];
      for (int64_t i = 0; i < 8; ++i)
        acc += static_cast<double>(x[row * 8 + i]) * weight[i * 16 + o];
      const double want = std::max(0.0, acc) + res[row * 16 + o];
      max_err = std::max(max_err, std::abs(want - y[row * 16 + o]));
    }
  }
  EXPECT_LT(max_err, 1e-5);
}

TEST(CompiledModel, UnpackForAReaderThatIsNotAConvIsExact) {
  const int64_t n = 2, c = 5, h = 3, w = 19, k = 24;
  testing::OnnxModel m;
  m.input("x", {n, c, h, w});
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(n * c * h * w), weight(k * c);
  for (float& v : x) v = u(rng);
  for (float& v : weight) v = u(rng);
  m.floats("W", {k, c, 1, 1}, weight);
  m.node("Conv", {"x", "W"}, {"c"});
  m.node("Flatten", {"c"}, {"y"});
  m.output("y");
  Result<frontend::Graph> graph = frontend::import_onnx(m.write("unpack"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  compiler::CompileReport report;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, {}, &report);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(report.layout_transforms, 2);  // x packed inside the conv, c unpacked for Flatten
  auto exec = GraphExecutor::create(*artifact);
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  ASSERT_TRUE((*exec)->set_input("x", x).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);
  ASSERT_EQ(y.size(), static_cast<size_t>(n * k * h * w));
  double max_err = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < k; ++o) {
      for (int64_t i = 0; i < h * w; ++i) {
        double acc = 0;
        for (int64_t ci = 0; ci < c; ++ci) {
          acc += static_cast<double>(x[(b * c + ci) * h * w + i]) * weight[o * c + ci];
        }
        max_err = std::max(max_err, std::abs(acc - y[(b * k + o) * h * w + i]));
      }
    }
  }
  EXPECT_LT(max_err, 1e-4);
}

// Conv -> Relu -> MaxPool -> Conv -> GlobalAveragePool: the pools read the convs' NCHW[x]c
// outputs as they are (one layout transform left: the first conv's input), and the result equals
// a direct computation. The global average pool may also be a ReduceMean over the spatial axes
// (torchvision's x.mean([2, 3])), with or without keepdims.
class PackedPools : public ::testing::TestWithParam<std::string> {};

TEST_P(PackedPools, PoolsBetweenConvsStayPackedAndExact) {
  const std::string last = GetParam();
  const int64_t c = 3, h = 13, w = 11, k = 32, k2 = 16;
  testing::OnnxModel m;
  m.input("x", {1, c, h, w});
  std::mt19937 rng(11);
  auto random = [&](size_t size) { return uniform_floats(rng, size); };
  std::vector<float> w1 = random(k * c * 9), w2 = random(k2 * k);
  m.floats("W1", {k, c, 3, 3}, w1);
  m.floats("W2", {k2, k, 1, 1}, w2);
  testing::OnnxModel::attr(m.node("Conv", {"x", "W1"}, {"c1"}), "pads",
                           std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"});
  onnx::NodeProto* pool = m.node("MaxPool", {"r1"}, {"p1"});
  testing::OnnxModel::attr(pool, "kernel_shape", std::vector<int64_t>{3, 3});
  testing::OnnxModel::attr(pool, "strides", std::vector<int64_t>{2, 2});
  testing::OnnxModel::attr(pool, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Conv", {"p1", "W2"}, {"c2"});
  if (last == "GlobalAveragePool") {
    m.node("GlobalAveragePool", {"c2"}, {"y"});
  } else {
    onnx::NodeProto* mean = m.node("ReduceMean", {"c2"}, {"y"});
    const bool keep = last == "ReduceMean_keepdims";
    testing::OnnxModel::attr(mean, "axes",
                             keep ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{-1, -2});
    testing::OnnxModel::attr(mean, "keepdims", int64_t{keep ? 1 : 0});
  }
  m.output("y");
  Result<frontend::Graph> graph = frontend::import_onnx(m.write("packed_pools_" + last));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  compiler::CompileReport report;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, {}, &report);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(report.layout_transforms, 1);
  auto exec = GraphExecutor::create(*artifact);
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  std::vector<float> x = random(c * h * w);
  ASSERT_TRUE((*exec)->set_input("x", x).ok());
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);
  ASSERT_EQ(y.size(), static_cast<size_t>(k2));

  // Reference: conv 3x3 pad 1 + relu, maxpool 3x3 s2 p1, conv 1x1, global average.
  std::vector<double> r1(k * h * w);
  for (int64_t o = 0; o < k; ++o)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        double acc = 0;
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t b = 0; b < 3; ++b) {
              int64_t hi = i + a - 1, wj = j + b - 1;
              if (hi >= 0 && hi < h && wj >= 0 && wj < w)
                acc += static_cast<double>(x[(ci * h + hi) * w + wj]) *
                       w1[((o * c + ci) * 3 + a) * 3 + b];
            }
        r1[(o * h + i) * w + j] = std::max(0.0, acc);
      }
  const int64_t ph = (h + 2 - 3) / 2 + 1, pw = (w + 2 - 3) / 2 + 1;
  std::vector<double> p1(k * ph * pw, -1e30);
  for (int64_t o = 0; o < k; ++o)
    for (int64_t i = 0; i < ph; ++i)
      for (int64_t j = 0; j < pw; ++j)
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t b = 0; b < 3; ++b) {
            int64_t hi = i * 2 - 1 + a, wj = j * 2 - 1 + b;
            if (hi >= 0 && hi < h && wj >= 0 && wj < w)
              p1[(o * ph + i) * pw + j] =
                  std::max(p1[(o * ph + i) * pw + j], r1[(o * h + hi) * w + wj]);
          }
  double max_err = 0;
  for (int64_t o = 0; o < k2; ++o) {
    double sum = 0;
    for (int64_t i = 0; i < ph * pw; ++i) {
      double acc = 0;
      for (int64_t ci = 0; ci < k; ++ci) acc += w2[o * k + ci] * p1[ci * ph * pw + i];
      sum += acc;
    }
    max_err = std::max(max_err, std::abs(sum / (ph * pw) - y[o]));
  }
  EXPECT_LT(max_err, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(CompiledModel, PackedPools,
                         ::testing::Values("GlobalAveragePool", "ReduceMean_keepdims",
                                           "ReduceMean"));

TEST(CompileCli, CompileRunAndTheUntunedNote) {
  if (!fs::exists(kModels)) GTEST_SKIP() << "no " << kModels;
  TempDir dir;
  std::string artifact = (dir / "mlp.kiln").string();
  testing::CommandResult r =
      testing::run_kiln("compile " + (kModels / "mlp" / "mlp.onnx").string() + " -o " + artifact);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 of 3 tasks untuned: 0 predicted"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  default   dense_pack.x86"), std::string::npos) << r.output;
  std::string out = (dir / "out.bin").string();
  r = testing::run_kiln("run " + artifact + " --input " + (kModels / "mlp" / "input.bin").string() +
                        " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LE(relative_error(read_floats(out), read_floats(kModels / "mlp" / "output.bin")), 1e-4);
  r = testing::run_kiln("bench " + artifact + " --threads 1 --repeat 3 --warmup 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("median"), std::string::npos) << r.output;
}

TEST(CompileCli, BadModelsAreExitTwoNamingTheProblem) {
  TempDir dir;
  std::string not_onnx = (dir / "not.onnx").string();
  std::ofstream(not_onnx) << "this is not a protobuf";
  testing::CommandResult r =
      testing::run_kiln("compile " + not_onnx + " -o " + (dir / "a.kiln").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not.onnx"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "a.kiln"));

  testing::OnnxModel m;
  m.input("x", {1, 4});
  m.node("Elu", {"x"}, {"y"});
  m.output("y");
  std::string elu = m.write("elu");
  r = testing::run_kiln("compile " + elu + " -o " + (dir / "b.kiln").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("Elu"), std::string::npos) << r.output;

  r = testing::run_kiln("compile " + elu + " --db " + (dir / "absent.db").string() + " -o " +
                        (dir / "c.kiln").string());
  EXPECT_NE(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace kiln
