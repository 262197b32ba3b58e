// Every operator, several awkward shapes, a seeded random sample of at least 200 configs each
// (the whole space when it is smaller): each config either compiles to a kernel whose output
// matches the reference (relative error <= 1e-4) or is rejected as invalid with a reason.
// Compiled with the real LLVM builder and run natively.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "builder/target.h"
#include "ops/registry.h"
#include "runner/build_and_measure.h"
#include "runner/local_measure.h"
#include "runtime/thread_pool.h"
#include "tests/ops_test_util.h"
#include "tuner/space_walk.h"

namespace kiln {
namespace {

using ops::Case;

class OpsCorrectness : public ::testing::TestWithParam<Case> {};

TEST_P(OpsCorrectness, RandomConfigsAreCorrectOrRejected) {
  const Case& c = GetParam();
  const ops::Template* tmpl = ops::find_template(c.template_name);
  ASSERT_NE(tmpl, nullptr) << c.template_name;
  auto parsed = ops::Workload::parse(c.workload);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  auto w = tmpl->normalize(*parsed);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ConfigSpace space = tmpl->space(*w);
  std::mt19937_64 rng(2024);
  std::vector<int64_t> indices = tuner::sample_ints(space, 200, rng);
  ASSERT_EQ(static_cast<int64_t>(indices.size()), std::min<int64_t>(200, space.size()));

  Target target = builder::host_target();
  ThreadPool pool(2);
  runner::MeasureOptions options;
  int correct = 0, rejected = 0;
  for (int64_t index : indices) {
    ConfigEntity config = space.get(index);
    MeasureResult m = runner::check_config(*tmpl, *w, config, target, options, pool);
    if (m.error == MeasureError::kNoError) {
      ++correct;
      EXPECT_LE(m.relative_error, 1e-4);
    } else {
      ++rejected;
      EXPECT_EQ(m.error, MeasureError::kInstantiationError)
          << "config " << index << " " << config.entity_string() << ": " << m.message;
      EXPECT_FALSE(m.message.empty()) << "config " << index << " rejected without a reason";
    }
  }
  // A space whose sampled configs are all invalid would make this test vacuous.
  EXPECT_GT(correct, 0);
  std::printf("%s %s: %d correct, %d rejected of %zu\n", c.template_name.c_str(),
              c.workload.c_str(), correct, rejected, indices.size());
}

INSTANTIATE_TEST_SUITE_P(Dense, OpsCorrectness,
                         ::testing::Values(Case{"dense_nopack.x86", "dense:M=7,N=13,K=17"},
                                           Case{"dense_nopack.x86", "dense:M=1,N=1000,K=512"},
                                           Case{"dense_nopack.x86", "dense:M=5,N=24,K=9,bias=1"},
                                           Case{"dense_pack.x86", "dense:M=7,N=13,K=17"},
                                           Case{"dense_pack.x86", "dense:M=16,N=48,K=32"},
                                           Case{"dense_pack.x86", "dense:M=12,N=30,K=20,bias=1"}));

INSTANTIATE_TEST_SUITE_P(
    BatchMatmul, OpsCorrectness,
    ::testing::Values(Case{"batch_matmul.x86", "batch_matmul:B=3,M=7,N=13,K=5"},
                      Case{"batch_matmul.x86", "batch_matmul:B=2,M=16,N=32,K=24"}));

INSTANTIATE_TEST_SUITE_P(
    Conv2d, OpsCorrectness,
    ::testing::Values(
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=3,H=11,W=13,K=8,R=3,S=3,stride=2,pad=1"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=16,H=7,W=7,K=24,R=1,S=1,stride=1,pad=0"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=8,H=9,W=10,K=12,R=1,S=1,stride=2,pad=1"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=4,H=9,W=9,K=6,R=3,S=3,stride=1,pad=2,dilation=2"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=2,C=6,H=8,W=8,K=10,R=3,S=3,stride=1,pad=1"},
        Case{"conv2d_NCHWc.x86", "conv2d:N=1,C=16,H=17,W=17,K=16,R=5,S=5,stride=1,pad=2"}));

INSTANTIATE_TEST_SUITE_P(
    DepthwiseConv2d, OpsCorrectness,
    ::testing::Values(Case{"depthwise_conv2d_NCHWc.x86",
                           "depthwise_conv2d:N=1,C=8,H=11,W=11,R=3,S=3,stride=1,pad=1"},
                      Case{"depthwise_conv2d_NCHWc.x86",
                           "depthwise_conv2d:N=1,C=6,H=13,W=9,R=3,S=3,stride=2,pad=1"},
                      Case{"depthwise_conv2d_NCHWc.x86",
                           "depthwise_conv2d:N=2,C=16,H=10,W=10,R=5,S=5,stride=1,pad=2"}));

}  // namespace
}  // namespace kiln
