// What sits between convs computed in the convs' NCHW[b]c layout: elementwise groups and channel
// Concats (compiler/lower_packed_elementwise.h), and AveragePool behind a Pad of zeros
// (compiler/lower_packed_pool.h). A DenseNet-style Concat -> BatchNorm -> Relu, a
// squeeze-excitation Mul by channel scales and a transition's pool, compiled for the host and for
// AVX2, match a direct double-precision computation, and keep the layout where the channel
// counts allow it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "builder/target.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
#include "ops/registry.h"
#include "runtime/graph_executor.h"
#include "store/open_store.h"
#include "tests/max_error.h"
#include "tests/onnx_models.h"

namespace kiln {
namespace {

using Tensor = std::vector<double>;  // NCHW with N = 1

// n floats drawn uniformly from [lo, hi).
std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

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

// Runs the model on `threads` threads with input x, over an arena full of NaN (a read of memory
// no step wrote, or of one value's bytes overwritten by another's, carries one through), and
// expects its output within 1e-5 of `ref`, relative to ref's largest magnitude.
void expect_output(const ModelArtifact& artifact, int threads, const std::vector<float>& x,
                   const Tensor& ref) {
  auto exec = GraphExecutor::create(artifact, threads, "packed_between_convs");
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  ASSERT_TRUE((*exec)->set_input("x", x).ok());
  std::fill((*exec)->arena().begin(), (*exec)->arena().end(), std::nanf(""));
  (*exec)->run();
  std::span<const float> y = (*exec)->get_output(0);
  ASSERT_EQ(y.size(), ref.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err = testing::max_error(err, std::abs(y[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  EXPECT_LT(err / scale, 1e-5) << threads << " thread(s)";
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
    auto random = [&](size_t n, float lo = -1, float hi = 1) {
      return random_floats(rng, n, lo, hi);
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

    for (int threads : {1, 2}) expect_output(*artifact, threads, x, ref);
  }
};

// An AveragePool between two 1x1 convs, behind a Pad of zeros as PyTorch exports DenseNet's
// transitions: the pad is no kernel and the pool reads and writes the packed layout.
struct PoolCase {
  int64_t kernel = 2, stride = 2, pad = 0;
  bool include_pad = false;
};

void expect_pool_between_convs(const std::string& target_text, const PoolCase& pc) {
  Result<Target> target = builder::parse_target(target_text);
  ASSERT_TRUE(target.ok()) << target.status().message();
  if (!builder::runs_on_host(*target).ok()) GTEST_SKIP() << target_text << " does not run here";
  const int64_t c = 64, k = 64, k_out = 32, h = 9, w = 11;
  const int64_t ph = (h + 2 * pc.pad - pc.kernel) / pc.stride + 1;
  const int64_t pw = (w + 2 * pc.pad - pc.kernel) / pc.stride + 1;
  std::mt19937 rng(5);
  auto random = [&](size_t n) { return random_floats(rng, n); };
  std::vector<float> x = random(c * h * w), w1 = random(k * c), w2 = random(k_out * k);
  testing::OnnxModel m;
  m.input("x", {1, c, h, w});
  m.floats("W1", {k, c, 1, 1}, w1);
  m.floats("W2", {k_out, k, 1, 1}, w2);
  m.ints("zeros", {8}, std::vector<int64_t>(8, 0));
  m.node("Conv", {"x", "W1"}, {"c1"});
  m.node("Pad", {"c1", "zeros"}, {"padded"});
  onnx::NodeProto* pool = m.node("AveragePool", {"padded"}, {"p"});
  testing::OnnxModel::attr(pool, "kernel_shape", std::vector<int64_t>{pc.kernel, pc.kernel});
  testing::OnnxModel::attr(pool, "strides", std::vector<int64_t>{pc.stride, pc.stride});
  testing::OnnxModel::attr(pool, "pads", std::vector<int64_t>(4, pc.pad));
  testing::OnnxModel::attr(pool, "count_include_pad", int64_t{pc.include_pad ? 1 : 0});
  m.node("Conv", {"p", "W2"}, {"y"});
  m.output("y");
  Result<frontend::Graph> graph = frontend::import_onnx(m.write("packed_average_pool"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  compiler::CompileOptions options;
  options.target = target_text;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, options, nullptr);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  for (const ModelStep& step : artifact->steps) {
    EXPECT_EQ(step.label.find("Pad"), std::string::npos) << step.label;
    if (step.label.find("AveragePool") != std::string::npos) {
      EXPECT_NE(step.label.find("(NCHW"), std::string::npos) << step.label;
    }
  }

  Tensor c1 = conv1x1(Tensor(x.begin(), x.end()), {c, h, w}, w1, k);
  Tensor p(k * ph * pw, 0.0);
  for (int64_t ch = 0; ch < k; ++ch)
    for (int64_t i = 0; i < ph; ++i)
      for (int64_t j = 0; j < pw; ++j) {
        double sum = 0;
        int64_t count = 0;
        for (int64_t a = 0; a < pc.kernel; ++a)
          for (int64_t b = 0; b < pc.kernel; ++b) {
            int64_t hi = i * pc.stride - pc.pad + a, wj = j * pc.stride - pc.pad + b;
            bool inside = hi >= 0 && hi < h && wj >= 0 && wj < w;
            if (inside) sum += c1[(ch * h + hi) * w + wj];
            count += inside || pc.include_pad;
          }
        p[(ch * ph + i) * pw + j] = sum / static_cast<double>(count);
      }
  Tensor ref = conv1x1(p, {k, ph, pw}, w2, k_out);
  expect_output(*artifact, 2, x, ref);
}

TEST_P(PackedBetweenConvs, ChannelsInWholeBlocksStayPacked) { run(Case{}, true); }

TEST_P(PackedBetweenConvs, AnAveragePoolBehindAZeroPadStaysPacked) {
  expect_pool_between_convs(GetParam(), PoolCase{});
}

// Border windows hold fewer taps: each output divides by its own count, with and without the pads.
TEST_P(PackedBetweenConvs, AnAveragePoolCountsItsBorderWindows) {
  expect_pool_between_convs(GetParam(), PoolCase{3, 1, 1, false});
  expect_pool_between_convs(GetParam(), PoolCase{3, 2, 1, true});
}

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

// A DenseNet block: p = Conv(x); f1 = Conv(Relu(p)); cat1 = Concat(p, f1);
// f2 = Conv(Relu(cat1)); cat2 = Concat(p, f1, f2); y = Conv(cat2). Both Concats are computed in
// place (compiler/concat_in_place.h): no Concat kernel, the convs write into one storage, and
// the output is exact.
TEST_P(PackedBetweenConvs, DenseBlockConcatsAreComputedInPlace) {
  Result<Target> target = builder::parse_target(GetParam());
  ASSERT_TRUE(target.ok()) << target.status().message();
  if (!builder::runs_on_host(*target).ok()) GTEST_SKIP() << GetParam() << " does not run here";
  const int64_t c = 32, g = 32, k_out = 16, h = 6, w = 7, hw = h * w;
  std::mt19937 rng(11);
  auto random = [&](size_t n) { return random_floats(rng, n); };
  std::vector<float> x = random(c * hw), w0 = random(g * c), w1 = random(g * g),
                     w2 = random(g * 2 * g), w3 = random(k_out * 3 * g);
  testing::OnnxModel m;
  m.input("x", {1, c, h, w});
  m.floats("W0", {g, c, 1, 1}, w0);
  m.floats("W1", {g, g, 1, 1}, w1);
  m.floats("W2", {g, 2 * g, 1, 1}, w2);
  m.floats("W3", {k_out, 3 * g, 1, 1}, w3);
  m.node("Conv", {"x", "W0"}, {"p"});
  m.node("Relu", {"p"}, {"r1"});
  m.node("Conv", {"r1", "W1"}, {"f1"});
  testing::OnnxModel::attr(m.node("Concat", {"p", "f1"}, {"cat1"}), "axis", int64_t{1});
  m.node("Relu", {"cat1"}, {"r2"});
  m.node("Conv", {"r2", "W2"}, {"f2"});
  testing::OnnxModel::attr(m.node("Concat", {"p", "f1", "f2"}, {"cat2"}), "axis", int64_t{1});
  m.node("Conv", {"cat2", "W3"}, {"y"});
  m.output("y");
  Result<frontend::Graph> graph = frontend::import_onnx(m.write("dense_block"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  compiler::CompileOptions options;
  options.target = GetParam();
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, options, nullptr);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  for (const ModelStep& s : artifact->steps) {
    EXPECT_EQ(s.label.find("Concat"), std::string::npos) << s.label;
  }
  int placed = 0;
  for (const ModelValue& v : artifact->values) placed += v.kind == ModelValueKind::kView;
  EXPECT_GE(placed, 3) << "p, f1 and cat1 in cat2's storage";

  Tensor xd(x.begin(), x.end()), relu_p(c * hw);
  Tensor p = conv1x1(xd, {c, h, w}, w0, g);
  for (size_t i = 0; i < p.size(); ++i) relu_p[i] = std::max(0.0, p[i]);
  Tensor f1 = conv1x1(relu_p, {g, h, w}, w1, g);
  Tensor cat = p;
  cat.insert(cat.end(), f1.begin(), f1.end());
  Tensor relu_cat(cat.size());
  for (size_t i = 0; i < cat.size(); ++i) relu_cat[i] = std::max(0.0, cat[i]);
  Tensor f2 = conv1x1(relu_cat, {2 * g, h, w}, w2, g);
  cat.insert(cat.end(), f2.begin(), f2.end());
  Tensor ref = conv1x1(cat, {3 * g, h, w}, w3, k_out);
  for (int threads : {1, 2}) expect_output(*artifact, threads, x, ref);
}

// A record of the first valid config of conv2d_NCHWc.x86 for `w` that reads its data in block
// `in` and writes block `out`.
store::Record record_with_blocks(const ops::Workload& raw, int64_t in, int64_t out) {
  const ops::Template& tmpl = *ops::find_template("conv2d_NCHWc.x86");
  ops::Workload w = *tmpl.normalize(raw);
  ConfigSpace space = tmpl.space(w);
  store::Record r;
  r.target = builder::host_target().to_string();
  r.task_name = std::string(tmpl.name());
  r.workload = w.to_string();
  r.costs = {1e-4};
  r.timestamp = 1700000000;
  r.flop = tmpl.flop(w);
  r.source = "test";
  for (int64_t i = 0; i < space.size(); ++i) {
    ConfigEntity config = space.get(i);
    std::optional<ops::ActivationBlocks> blocks = tmpl.activation_blocks(w, config);
    if (blocks && blocks->in == in && blocks->out == out) {
      r.config_index = i;
      r.entities = config.to_json()["entity"];
      return r;
    }
  }
  ADD_FAILURE() << "no config of " << w.to_string() << " with blocks " << in << " -> " << out;
  return r;
}

// Concat(conv1, conv2) -> Relu -> conv3 with a store whose records make conv1 and conv2 write
// block 8 and conv3 read block 16: the planner is told that conv3 reads both producers (two
// mismatched edges, not one), and the output is the untuned compile's.
TEST(PackedConcatPlan, EveryProducerOfAConcatIsAnEdgeOfThePlan) {
  const int64_t c = 32, k = 32, h = 6, w = 6;
  std::mt19937 rng(9);
  auto random = [&](size_t n) { return random_floats(rng, n); };
  std::vector<float> x = random(c * h * w);
  testing::OnnxModel m;
  m.input("x", {1, c, h, w});
  m.floats("W1", {k, c, 1, 1}, random(k * c));
  m.floats("W2", {k, c, 1, 1}, random(k * c));
  m.floats("W3", {k, 2 * k, 1, 1}, random(2 * k * k));
  m.node("Conv", {"x", "W1"}, {"c1"});
  m.node("Conv", {"x", "W2"}, {"c2"});
  testing::OnnxModel::attr(m.node("Concat", {"c1", "c2"}, {"cat"}), "axis", int64_t{1});
  m.node("Relu", {"cat"}, {"r"});
  m.node("Conv", {"r", "W3"}, {"y"});
  m.output("y");
  Result<frontend::Graph> graph = frontend::import_onnx(m.write("packed_concat_plan"));
  ASSERT_TRUE(graph.ok()) << graph.status().message();

  auto conv = [](int64_t in_c, int64_t out_c) {
    return *ops::Workload::parse("conv2d:N=1,C=" + std::to_string(in_c) +
                                 ",H=6,W=6,K=" + std::to_string(out_c) + ",R=1,S=1,stride=1,pad=0");
  };
  std::string path = (std::filesystem::temp_directory_path() /
                      ("kiln-packed-plan-" + std::to_string(getpid()) + ".db"))
                         .string();
  {
    auto db = store::open_store(path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)
                    ->append({record_with_blocks(conv(c, k), 8, 8),
                              record_with_blocks(conv(2 * k, k), 16, 16)})
                    .ok());
  }
  auto db = store::open_store(path, /*read_only=*/true);
  ASSERT_TRUE(db.ok()) << db.status().message();
  compiler::CompileOptions options;
  options.store = db->get();
  compiler::CompileReport report;
  Result<ModelArtifact> tuned = compiler::compile_model(*graph, options, &report);
  ASSERT_TRUE(tuned.ok()) << tuned.status().message();
  EXPECT_TRUE(report.planned);
  EXPECT_EQ(report.plan_transforms, 2);  // conv1 -> conv3 and conv2 -> conv3

  Result<ModelArtifact> untuned = compiler::compile_model(*graph, {}, nullptr);
  ASSERT_TRUE(untuned.ok()) << untuned.status().message();
  auto run = [&](const ModelArtifact& artifact) {
    auto exec = GraphExecutor::create(artifact, 1, "packed_concat_plan");
    EXPECT_TRUE(exec.ok()) << exec.status().message();
    if (!exec.ok()) return std::vector<float>{};
    EXPECT_TRUE((*exec)->set_input("x", x).ok());
    (*exec)->run();
    std::span<const float> y = (*exec)->get_output(0);
    return std::vector<float>(y.begin(), y.end());
  };
  std::vector<float> a = run(*tuned), b = run(*untuned);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4) << i;
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Targets, PackedBetweenConvs,
                         ::testing::Values("llvm", "llvm -mcpu=znver3"));

}  // namespace
}  // namespace kiln
