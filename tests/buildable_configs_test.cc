// Issue 9: a config TVM builds must build in kiln. TVM unrolls what its schedule says and leaves
// the rest to LLVM, and puts a large local buffer in a workspace; kiln used to refuse such
// configs (INSTANTIATION_ERROR), including AutoTVM's own fallback for dense_nopack at
// M=N=K=256. Every template's fallback, and every config of a seeded random sample, must now
// instantiate within the code generator's limits, and those reshaped to fit (loops made serial,
// accumulators blocked) must compute the reference's answer.
//
// Compiled with the real LLVM builder and run natively. Building is the slow part, so the
// random samples are instantiated in full and only a few reshaped configs per workload built.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>

#include "builder/target.h"
#include "ops/registry.h"
#include "runner/build_and_measure.h"
#include "runner/local_measure.h"
#include "runtime/thread_pool.h"
#include "tests/codegen_limits.h"
#include "tests/ops_test_util.h"
#include "tuner/space_walk.h"

namespace kiln {
namespace {

using ops::Case;

struct Task {
  const ops::Template* tmpl = nullptr;
  ops::Workload workload;
};

Task load(const Case& c) {
  Task task;
  task.tmpl = ops::find_template(c.template_name);
  EXPECT_NE(task.tmpl, nullptr) << c.template_name;
  if (task.tmpl == nullptr) return task;
  auto parsed = ops::Workload::parse(c.workload);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  auto w = task.tmpl->normalize(*parsed);
  EXPECT_TRUE(w.ok()) << w.status().message();
  if (w.ok()) task.workload = *w;
  return task;
}

// Builds, runs and checks `config` against the template's reference.
void ExpectCorrect(const Task& task, const ConfigEntity& config, const Target& target,
                   ThreadPool& pool) {
  MeasureResult m = runner::check_config(*task.tmpl, task.workload, config, target, {}, pool);
  EXPECT_EQ(m.error, MeasureError::kNoError) << config.entity_string() << ": " << m.message;
  EXPECT_LE(m.relative_error, 1e-4) << config.entity_string();
}

// Whether the program has loops that schedule_util added to fit the limits: a serial loop
// split off an unrolled one ("<name>.o") or a loop over accumulator blocks ("...blk").
bool Reshaped(const ir::Program& program) {
  bool found = false;
  std::function<void(const ir::Stmt&)> walk = [&](const ir::Stmt& s) {
    if (!s.defined() || found) return;
    if (s->kind == ir::StmtKind::kFor) {
      const std::string& name = s->loop_var->name;
      found = name.ends_with(".o") || name.ends_with("blk");
    }
    walk(s->body);
    walk(s->then_case);
    walk(s->else_case);
    for (const ir::Stmt& c : s->seq) walk(c);
  };
  for (const ir::Stage& stage : program.stages) walk(stage.body);
  return found;
}

class FallbackConfig : public ::testing::TestWithParam<Case> {};

TEST_P(FallbackConfig, BuildsAndMatchesTheReference) {
  Task task = load(GetParam());
  ASSERT_NE(task.tmpl, nullptr);
  Target target = builder::host_target();
  ops::TargetInfo info{target.simd_lanes()};
  ConfigSpace space = task.tmpl->space(task.workload);
  ConfigEntity fallback = task.tmpl->fallback(task.workload, space, info);
  auto program = task.tmpl->instantiate(task.workload, fallback, info);
  ASSERT_TRUE(program.ok()) << fallback.entity_string() << ": " << program.status().message();
  testing_util::ExpectWithinCodegenLimits(*program, info, fallback.entity_string());
  ThreadPool pool(2);
  ExpectCorrect(task, fallback, target, pool);
}

INSTANTIATE_TEST_SUITE_P(
    Issue9, FallbackConfig,
    ::testing::Values(
        Case{"dense_nopack.x86", "dense:M=256,N=256,K=256"},  // the issue's case
        Case{"dense_pack.x86", "dense:M=256,N=256,K=256"},
        Case{"dense_nopack.x86", "dense:M=1,N=1000,K=512"},  // ResNet-18's classifier
        Case{"dense_pack.x86", "dense:M=1,N=1000,K=512"},
        Case{"batch_matmul.x86", "batch_matmul:B=12,M=128,N=128,K=64"},  // BERT-base scores
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=256,H=14,W=14,K=512,R=1,S=1,stride=2"},
        Case{"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=32,H=112,W=112,R=3,S=3,pad=1"},
        Case{"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=512,H=14,W=14,R=3,S=3,pad=1"}));

class RandomConfigs : public ::testing::TestWithParam<Case> {};

TEST_P(RandomConfigs, InstantiateWithinLimitsAndReshapedOnesAreCorrect) {
  constexpr int kSample = 200;
  constexpr int kBuilt = 3;  // reshaped configs built and checked per workload
  Task task = load(GetParam());
  ASSERT_NE(task.tmpl, nullptr);
  Target target = builder::host_target();
  ops::TargetInfo info{target.simd_lanes()};
  ConfigSpace space = task.tmpl->space(task.workload);
  std::mt19937_64 rng(9);
  ThreadPool pool(2);
  int reshaped = 0;
  for (int64_t index : tuner::sample_ints(space, kSample, rng)) {
    ConfigEntity config = space.get(index);
    auto program = task.tmpl->instantiate(task.workload, config, info);
    ASSERT_TRUE(program.ok()) << "config " << index << " " << config.entity_string() << ": "
                              << program.status().message();
    testing_util::ExpectWithinCodegenLimits(*program, info, config.entity_string());
    if (!Reshaped(*program)) continue;
    if (++reshaped <= kBuilt) ExpectCorrect(task, config, target, pool);
  }
  // Samples without a config beyond the limits would not test the reshaping.
  EXPECT_GT(reshaped, 0);
  std::printf("%s %s: %d of %d sampled configs reshaped to fit\n", GetParam().template_name.c_str(),
              GetParam().workload.c_str(), reshaped, kSample);
}

INSTANTIATE_TEST_SUITE_P(
    Issue9, RandomConfigs,
    ::testing::Values(Case{"dense_pack.x86", "dense:M=512,N=512,K=512"},
                      Case{"dense_nopack.x86", "dense:M=256,N=256,K=256"},
                      Case{"dense_nopack.x86", "dense:M=1,N=1000,K=512"},
                      Case{"batch_matmul.x86", "batch_matmul:B=12,M=128,N=128,K=64"},
                      Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=64,H=14,W=14,K=256,R=3,S=3,pad=1"},
                      Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=16,H=28,W=28,K=1024,R=1,S=1"},
                      Case{"depthwise_conv2d_NCHWc.x86",
                           "depthwise_conv2d:N=1,C=256,H=14,W=14,R=3,S=3,pad=1"}));

}  // namespace
}  // namespace kiln
