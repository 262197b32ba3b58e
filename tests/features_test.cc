// Cost-model features (costmodel/features.h, touch_extractor.h): AutoTVM's itervar, curve and
// knob vectors (reference/autotvm.md §4), pinned by hand on a small loop nest, then checked on
// the real templates together with the extractor's cache and thread pool.
#include "costmodel/features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "costmodel/touch_extractor.h"
#include "ir/ir.h"
#include "ops/registry.h"
#include "tuner/space_walk.h"

namespace kiln::costmodel {
namespace {

using ir::Expr;
using ir::LoopKind;

// AutoTVM's log transform, written out independently of log_transform().
float L(double x) { return x < 0 ? -static_cast<float>(std::log2(1 - x)) : std::log2(1 + x); }

// C[i, j] += A[i, k] * B[k, j] with i parallel (4), k serial (16), j vectorized (8):
//   for i in 0..4 parallel
//     for k in 0..16
//       for j in 0..8 vectorized
//         C[i*8 + j] = C[i*8 + j] + A[i*16 + k] * B[k*8 + j]
// Accesses in visit order (the store, then its value's loads): C_0 (store), C_1, A_0, B_0.
ir::Program Matmul() {
  ir::Buffer a("A", {4, 16}, ir::BufferScope::kArgument);
  ir::Buffer b("B", {16, 8}, ir::BufferScope::kArgument);
  ir::Buffer c("C", {4, 8}, ir::BufferScope::kArgument);
  Expr i = ir::var("i"), k = ir::var("k"), j = ir::var("j");
  ir::Stmt update = ir::Store(c, {i, j}, c.load({i, j}) + a.load({i, k}) * b.load({k, j}));
  ir::Program p;
  p.name = "matmul";
  p.buffers = {a, b, c};
  p.num_inputs = 2;
  p.num_outputs = 1;
  // An untimed stage (like weight packing) must not contribute anything.
  Expr t = ir::var("t");
  ir::Stmt untimed =
      ir::For(t, 64, LoopKind::kParallel, ir::StoreFlat(b, t, b.load_flat(t) * ir::f32(2)));
  p.stages.push_back({"pack", untimed, /*timed=*/false});
  p.stages.push_back(
      {"matmul",
       ir::LoopNest(
           {{i, 4, LoopKind::kParallel}, {k, 16, LoopKind::kSerial}, {j, 8, LoopKind::kVectorized}},
           update),
       /*timed=*/true});
  return p;
}

TEST(FeaturesTouch, MatmulByHand) {
  TouchFeatures f = extract_touch_features(Matmul());
  ASSERT_EQ(f.itervars.size(), 3u);
  ASSERT_EQ(f.accesses.size(), 4u);
  EXPECT_EQ(f.accesses[0].name, "C_0");
  EXPECT_EQ(f.accesses[1].name, "C_1");
  EXPECT_EQ(f.accesses[2].name, "A_0");
  EXPECT_EQ(f.accesses[3].name, "B_0");

  const Itervar &i = f.itervars[0], &k = f.itervars[1], &j = f.itervars[2];
  EXPECT_EQ(i.nest_level, 1);
  EXPECT_EQ(k.nest_level, 2);
  EXPECT_EQ(j.nest_level, 3);
  EXPECT_EQ(i.topdown_product, 4);
  EXPECT_EQ(k.topdown_product, 64);    // 4*16
  EXPECT_EQ(j.topdown_product, 512);   // 4*16*8
  EXPECT_EQ(j.bottomup_product, 8);    // every access: count*reuse = 8 at j
  EXPECT_EQ(k.bottomup_product, 128);  // 8*16
  EXPECT_EQ(i.bottomup_product, 512);  // 128*4
  // One float add and one float mul, all in the innermost loop.
  EXPECT_EQ(j.add_ct, 1);
  EXPECT_EQ(j.mul_ct, 1);
  EXPECT_EQ(i.add_ct + i.mul_ct + k.add_ct + k.mul_ct, 0);

  // stride: coefficient of the loop var in the flat index (0 when absent).
  //   C: i*8 + j   A: i*16 + k   B: k*8 + j
  struct Want {
    int64_t stride, count, reuse, thread_count, thread_reuse;
  };
  // count/reuse multiply the extents from the loop inward whose var indexes / does not index
  // the access. j (8): C count 8; A reuse 8; B count 8.
  // k (16): C 8 | 16*1; A 16 | 8; B 8*16=128 | 1.  i (4): C 32 | 16; A 64 | 8; B 128 | 4.
  // thread_*: k is the serial child of the parallel i, so i's are i's count/reuse over k's:
  //   C 32/8=4, 16/16=1; A 64/16=4, 8/8=1; B 128/128=1, 4/1=4.  k and j: 0.
  const Want want[3][4] = {
      // C_0          C_1               A_0               B_0
      {{8, 32, 16, 4, 1}, {8, 32, 16, 4, 1}, {16, 64, 8, 4, 1}, {0, 128, 4, 1, 4}},  // i
      {{0, 8, 16, 0, 0}, {0, 8, 16, 0, 0}, {1, 16, 8, 0, 0}, {8, 128, 1, 0, 0}},     // k
      {{1, 8, 1, 0, 0}, {1, 8, 1, 0, 0}, {0, 1, 8, 0, 0}, {1, 8, 1, 0, 0}},          // j
  };
  for (int v = 0; v < 3; ++v) {
    for (int a = 0; a < 4; ++a) {
      const TouchPattern& p = f.touch(v, a);
      SCOPED_TRACE("itervar " + std::to_string(v) + " access " + f.accesses[a].name);
      EXPECT_EQ(p.stride, want[v][a].stride);
      EXPECT_EQ(p.mod, -1);
      EXPECT_EQ(p.count, want[v][a].count);
      EXPECT_EQ(p.reuse, want[v][a].reuse);
      EXPECT_EQ(p.thread_count, want[v][a].thread_count);
      EXPECT_EQ(p.thread_reuse, want[v][a].thread_reuse);
    }
  }
}

TEST(FeaturesTouch, LogTransform) {
  EXPECT_FLOAT_EQ(log_transform(0), 0.0f);
  EXPECT_FLOAT_EQ(log_transform(1), 1.0f);
  EXPECT_FLOAT_EQ(log_transform(-1), -1.0f);
  EXPECT_FLOAT_EQ(log_transform(4), 2.3219281f);  // log2(5)
  EXPECT_FLOAT_EQ(log_transform(-4), -2.3219281f);
  EXPECT_FLOAT_EQ(log_transform(511), 9.0f);
}

TEST(FeaturesItervar, MatmulFlattenedByHand) {
  std::vector<float> got = itervar_feature_flatten(extract_touch_features(Matmul()));
  // Per loop: T(length), nest_level, T(topdown), T(bottomup), one-hot(11), T(add), T(mul),
  // T(div); then per access sorted by name (A_0, B_0, C_0, C_1): T(stride), T(mod)=-1,
  // T(count), T(reuse), T(thread_count), T(thread_reuse). T(x) = log2(x+1), e.g. T(4) = 2.32.
  const std::vector<float> onehot_parallel = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};    // slot 8
  const std::vector<float> onehot_serial = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};      // slot 9
  const std::vector<float> onehot_vectorized = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};  // slot 7
  std::vector<float> want;
  auto add = [&](std::vector<float> v) { want.insert(want.end(), v.begin(), v.end()); };
  // i: length 4, level 1, topdown 4, bottomup 512.
  add({L(4), 1, L(4), L(512)});
  add(onehot_parallel);
  add({0, 0, 0});
  add({L(16), -1, L(64), L(8), L(4), L(1)});  // A_0
  add({L(0), -1, L(128), L(4), L(1), L(4)});  // B_0
  add({L(8), -1, L(32), L(16), L(4), L(1)});  // C_0
  add({L(8), -1, L(32), L(16), L(4), L(1)});  // C_1
  // k: length 16, level 2, topdown 64, bottomup 128.
  add({L(16), 2, L(64), L(128)});
  add(onehot_serial);
  add({0, 0, 0});
  add({L(1), -1, L(16), L(8), 0, 0});   // A_0
  add({L(8), -1, L(128), L(1), 0, 0});  // B_0
  add({L(0), -1, L(8), L(16), 0, 0});   // C_0
  add({L(0), -1, L(8), L(16), 0, 0});   // C_1
  // j: length 8, level 3, topdown 512, bottomup 8; add 1, mul 1.
  add({L(8), 3, L(512), L(8)});
  add(onehot_vectorized);
  add({L(1), L(1), 0});
  add({L(0), -1, L(1), L(8), 0, 0});             // A_0
  add({L(1), -1, L(8), L(1), 0, 0});             // B_0
  add({L(1), -1, L(8), L(1), 0, 0});             // C_0
  add({L(1), -1, L(8), L(1), 0, 0});             // C_1
  ASSERT_EQ(want.size(), 3u * 18 + 3u * 4 * 6);  // 126
  ASSERT_EQ(got.size(), want.size());
  for (size_t n = 0; n < want.size(); ++n) EXPECT_NEAR(got[n], want[n], 1e-5) << "at " << n;
  // A few literal values, to catch a shared mistake in L() and log_transform().
  EXPECT_NEAR(got[0], 2.321928f, 1e-5);   // T(4) = log2(5)
  EXPECT_NEAR(got[3], 9.002815f, 1e-5);   // T(512) = log2(513)
  EXPECT_NEAR(got[20], 6.022368f, 1e-5);  // A_0 count at i: T(64) = log2(65)
}

TEST(FeaturesCurve, MatmulSampledByHand) {
  std::vector<float> got = curve_feature_flatten(extract_touch_features(Matmul()), 4);
  // Innermost loop j touches C_0, C_1, A_0, B_0; one per raw name, the last C wins: A_0, B_0,
  // C_1. Each gives 4 relations * 4 samples * 2 floats.
  ASSERT_EQ(got.size(), 3u * 32);
  // A_0 over loops (i, k, j): log2 count (64,16,1) -> sorted [0,0,4,6] (leading 0 added);
  // log2 reuse (8,8,8) -> [0,3,3,3]; log2 topdown (4,64,512) -> [0,2,6,9].
  // Sample i = 0..3: the last j with x[j] <= i gives (y[j], i - x[j]).
  const std::vector<float> a0 = {
      3, 0, 3, 1, 3, 2, 3, 3,  // x=count [0,0,4,6], y=reuse: j=1 for every i
      0, 0, 0, 1, 0, 2, 6, 0,  // x=reuse [0,3,3,3], y=count: j=0, 0, 0, then 3
      2, 0, 2, 1, 2, 2, 2, 3,  // x=count, y=topdown [0,2,6,9]: j=1
      0, 0, 0, 1, 0, 0, 0, 1,  // x=topdown [0,2,6,9], y=count: j=0, 0, 1, 1
  };
  // C_1: count (32,8,8) -> [0,3,3,5]; reuse (16,16,1) -> [0,0,4,4]; topdown [0,2,6,9].
  const std::vector<float> c1 = {
      0, 0, 0, 1, 0, 2, 4, 0,  // x=count, y=reuse: j=0, 0, 0, 2
      3, 0, 3, 1, 3, 2, 3, 3,  // x=reuse, y=count: j=1
      0, 0, 0, 1, 0, 2, 6, 0,  // x=count, y=topdown: j=0, 0, 0, 2
      0, 0, 0, 1, 3, 0, 3, 1,  // x=topdown, y=count: j=0, 0, 1, 1
  };
  for (size_t n = 0; n < 32; ++n) {
    EXPECT_NEAR(got[n], a0[n], 1e-5) << "A_0 at " << n;
    EXPECT_NEAR(got[64 + n], c1[n], 1e-5) << "C_1 at " << n;
  }
}

TEST(FeaturesKnob, FlattenAndOtherOptions) {
  ConfigEntity config(7, {{"tile_y", SplitEntity{{-1, 4, 2}}},
                          {"order", ReorderEntity{{0, 2, 1}}},
                          {"ann", AnnotateEntity{{"unroll", "vec"}}},
                          {"unroll_kw", OtherOptionEntity{false}},
                          {"max_unroll", OtherOptionEntity{16}}});
  const std::vector<float> want = {
      -1, 4,  2,                          // split: sizes incl. the leading -1
      0,  2,  1,                          // reorder: perm
      0,  0,  1, 0, 0, 0, 0, 0, 0, 0, 0,  // "unroll" -> slot 2
      0,  1,  0, 0, 0, 0, 0, 0, 0, 0, 0,  // "vec" -> slot 1
      0,  16,                             // define_knob values, false -> 0
  };
  EXPECT_EQ(knob_feature_flatten(config), want);
  EXPECT_EQ(other_option_values(config), (std::vector<float>{0, 16}));
}

TEST(FeaturesType, ParseAndName) {
  for (FeatureType t : {FeatureType::kItervar, FeatureType::kKnob, FeatureType::kCurve}) {
    auto parsed = parse_feature_type(feature_type_name(t));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, t);
  }
  auto bad = parse_feature_type("itervars");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("knob"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Real templates.

struct Task {
  const ops::Template* tmpl;
  ops::Workload workload;
  ConfigSpace space;
};

Task MakeTask(const std::string& name, const std::string& workload) {
  const ops::Template* t = ops::find_template(name);
  EXPECT_NE(t, nullptr) << name;
  auto parsed = ops::Workload::parse(workload);
  EXPECT_TRUE(parsed.ok()) << workload;
  auto w = t->normalize(*parsed);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return Task{t, *w, t->space(*w)};
}

bool AllFinite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

const char* const kTasks[][2] = {
    {"dense_pack.x86", "dense:M=1024,N=1024,K=1024"},
    {"dense_nopack.x86", "dense:M=64,N=256,K=128"},
    {"conv2d_NCHWc.x86", "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"},
    {"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1"},
    {"batch_matmul.x86", "batch_matmul:B=12,M=128,N=128,K=64"},
};

TEST(FeaturesTemplates, FiniteNonEmptyRows) {
  for (const auto& [name, workload] : kTasks) {
    SCOPED_TRACE(name);
    Task task = MakeTask(name, workload);
    std::mt19937_64 rng(1);
    int ok = 0;
    for (int64_t index : tuner::sample_ints(task.space, 20, rng)) {
      ConfigEntity config = task.space.get(index);
      auto itervar = extract_features(*task.tmpl, task.workload, config, ops::TargetInfo{},
                                      FeatureType::kItervar);
      if (!itervar.ok()) {
        EXPECT_EQ(itervar.status().code(), StatusCode::kInstantiation);
        continue;
      }
      ++ok;
      EXPECT_FALSE(itervar->empty());
      EXPECT_TRUE(AllFinite(*itervar));
      // The knob values close the row.
      std::vector<float> options = other_option_values(config);
      ASSERT_GE(itervar->size(), options.size() + 18);
      EXPECT_TRUE(std::equal(options.begin(), options.end(), itervar->end() - options.size()));

      auto curve = extract_features(*task.tmpl, task.workload, config, ops::TargetInfo{},
                                    FeatureType::kCurve);
      ASSERT_TRUE(curve.ok());
      EXPECT_TRUE(AllFinite(*curve));
      ASSERT_GT(curve->size(), options.size());
      EXPECT_EQ((curve->size() - options.size()) % (8 * kCurveSampleN), 0u);

      auto knob = extract_features(*task.tmpl, task.workload, config, ops::TargetInfo{},
                                   FeatureType::kKnob);
      ASSERT_TRUE(knob.ok());
      EXPECT_EQ(*knob, knob_feature_flatten(config));
    }
    EXPECT_GT(ok, 0);
  }
}

// batch_matmul, except that configs of odd index are InstantiationErrors.
class OddIndicesRejected final : public ops::Template {
 public:
  explicit OddIndicesRejected(const ops::Template& base) : base_(base) {}
  std::string_view name() const override { return base_.name(); }
  std::string_view op() const override { return base_.op(); }
  Result<ops::Workload> normalize(const ops::Workload& w) const override {
    return base_.normalize(w);
  }
  std::vector<ops::TensorSpec> inputs(const ops::Workload& w) const override {
    return base_.inputs(w);
  }
  std::vector<ops::TensorSpec> outputs(const ops::Workload& w) const override {
    return base_.outputs(w);
  }
  double flop(const ops::Workload& w) const override { return base_.flop(w); }
  ConfigSpace space(const ops::Workload& w) const override { return base_.space(w); }
  ConfigEntity fallback(const ops::Workload& w, const ConfigSpace& space,
                        const ops::TargetInfo& target) const override {
    return base_.fallback(w, space, target);
  }
  Result<ir::Program> instantiate(const ops::Workload& w, const ConfigEntity& config,
                                  const ops::TargetInfo& target,
                                  const ops::ActivationLayout& = {}) const override {
    if (config.index() % 2 == 1) return InstantiationError("odd index");
    return base_.instantiate(w, config, target);
  }
  void reference(const ops::Workload& w, const std::vector<const float*>& in,
                 const std::vector<float*>& out) const override {
    base_.reference(w, in, out);
  }
  nlohmann::json tvm_args(const ops::Workload& w) const override { return base_.tvm_args(w); }

 private:
  const ops::Template& base_;
};

TEST(FeaturesTemplates, InvalidConfigIsAnError) {
  Task task = MakeTask("batch_matmul.x86", "batch_matmul:B=12,M=128,N=128,K=64");
  // A config without the template's knobs cannot instantiate.
  auto bad = extract_features(*task.tmpl, task.workload, ConfigEntity(), ops::TargetInfo{},
                              FeatureType::kItervar);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInstantiation);
  EXPECT_FALSE(extract_features(*task.tmpl, task.workload, ConfigEntity(), ops::TargetInfo{},
                                FeatureType::kCurve)
                   .ok());
  // Knob features need no IR (as in AutoTVM): an empty config has an empty knob row.
  auto knob = extract_features(*task.tmpl, task.workload, ConfigEntity(), ops::TargetInfo{},
                               FeatureType::kKnob);
  ASSERT_TRUE(knob.ok());
  EXPECT_TRUE(knob->empty());

  // Configs the template rejects give empty rows. Every config of a real template's space
  // instantiates (issue 9), so a wrapper rejects the odd indices.
  OddIndicesRejected odd(*task.tmpl);
  std::vector<int64_t> rejected = {1}, accepted = {0};
  task.tmpl = &odd;
  FeatureExtractor extractor(*task.tmpl, task.workload, task.space, ops::TargetInfo{},
                             FeatureType::kItervar, 2);
  auto rows = extractor.extract({rejected[0], accepted[0]});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].empty());
  EXPECT_FALSE(rows[1].empty());
}

TEST(FeaturesExtractor, CacheAndThreadsGiveTheSameRows) {
  for (const auto& [name, workload] : kTasks) {
    SCOPED_TRACE(name);
    Task task = MakeTask(name, workload);
    std::mt19937_64 rng(7);
    std::vector<int64_t> indices = tuner::sample_ints(task.space, 40, rng);
    indices.push_back(indices.front());  // a repeated index
    for (FeatureType type : {FeatureType::kItervar, FeatureType::kCurve, FeatureType::kKnob}) {
      FeatureExtractor serial(*task.tmpl, task.workload, task.space, ops::TargetInfo{}, type, 1);
      FeatureExtractor parallel(*task.tmpl, task.workload, task.space, ops::TargetInfo{}, type, 4);
      EXPECT_EQ(parallel.type(), type);
      auto a = serial.extract(indices);
      auto b = parallel.extract(indices);
      ASSERT_EQ(a.size(), indices.size());
      EXPECT_EQ(a, b);
      EXPECT_EQ(a.front(), a.back());
      EXPECT_EQ(parallel.cache_size(), indices.size() - 1);
      // Served from the cache: same rows, nothing added.
      EXPECT_EQ(parallel.extract(indices), b);
      EXPECT_EQ(parallel.cache_size(), indices.size() - 1);
      // Each row is what extract_features gives (empty when it fails).
      for (size_t n = 0; n < 3; ++n) {
        auto row = extract_features(*task.tmpl, task.workload, task.space.get(indices[n]),
                                    ops::TargetInfo{}, type);
        EXPECT_EQ(a[n], row.ok() ? *row : std::vector<float>());
      }
    }
  }
}

}  // namespace
}  // namespace kiln::costmodel
