// ONNX's backend node tests, one GoogleTest per test directory under
// KILN_SHARED_DIR/onnx-node-tests (tests/onnx_node_suite.h says what passes, fails or is not
// run). A test kiln does not support is skipped with kiln's reason; a wrong result fails.
// onnx_node_report prints the whole suite's tally.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/onnx_node_suite.h"

namespace kiln {
namespace {

using testing::NodeTestOutcome;

const std::string& node_test_root() {
  static const std::string root = std::string(KILN_SHARED_DIR) + "/onnx-node-tests";
  return root;
}

// Without the shared data, one placeholder test that skips saying so (an empty parameter list
// would register no test at all, and GoogleTest reports an uninstantiated suite).
constexpr const char* kNoData = "shared_data_absent";

std::vector<std::string> node_tests() {
  std::vector<std::string> names = testing::find_node_tests(node_test_root());
  if (names.empty()) names.push_back(kNoData);
  return names;
}

class OnnxNodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeTest, MatchesReference) {
  if (GetParam() == kNoData) {
    GTEST_SKIP() << "no ONNX node tests under " << node_test_root()
                 << " (../shared is absent): the conformance suite is not run";
  }
  NodeTestOutcome r = testing::run_node_test(node_test_root() + "/" + GetParam());
  if (r.kind == NodeTestOutcome::Kind::kNotRun) GTEST_SKIP() << "not run: " << r.detail;
  EXPECT_EQ(r.kind, NodeTestOutcome::Kind::kPassed) << r.detail;
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxNodeTest, ::testing::ValuesIn(node_tests()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// The comparison itself, on data whose answer is known.
TEST(OnnxNodeTolerance, IsOnnxsAbsolutePlusRelative) {
  using testing::compare_with_tolerance;
  EXPECT_EQ(compare_with_tolerance({1.0f, -2.0f, 0.0f}, {1.0, -2.0, 0.0}), "");
  // 1000 * 1e-3 + 1e-7 allows 1.0000001 around 1000.
  EXPECT_EQ(compare_with_tolerance({1000.9f}, {1000.0}), "");
  EXPECT_NE(compare_with_tolerance({1001.5f}, {1000.0}), "");
  // Around zero only atol applies.
  EXPECT_EQ(compare_with_tolerance({5e-8f}, {0.0}), "");
  EXPECT_NE(compare_with_tolerance({1e-6f}, {0.0}), "");
  // NaN matches NaN only; infinities match their own sign.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(compare_with_tolerance({nan, inf, -inf}, {std::nan(""), HUGE_VAL, -HUGE_VAL}), "");
  EXPECT_NE(compare_with_tolerance({nan}, {1.0}), "");
  EXPECT_NE(compare_with_tolerance({1.0f}, {std::nan("")}), "");
  EXPECT_NE(compare_with_tolerance({inf}, {-HUGE_VAL}), "");
  EXPECT_NE(compare_with_tolerance({1.0f, 2.0f}, {1.0}), "");
  // The message names the count and the worst element.
  std::string m = compare_with_tolerance({1, 5, 3, 10}, {1, 2, 3, 4});
  EXPECT_NE(m.find("2 of 4 elements"), std::string::npos) << m;
  EXPECT_NE(m.find("index 3"), std::string::npos) << m;
}

}  // namespace
}  // namespace kiln
