// The operator registry (ops/registry.h): kiln's own operators in their fixed order, one for
// every template's operator, the ONNX op types they map accepted by the importer once each, what
// naming an operator selects, and which template an untuned model takes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/layout_candidates.h"
#include "frontend/supported_ops.h"
#include "ops/registry.h"

namespace kiln {
namespace {

TEST(OperatorRegistry, ListsKilnsOperatorsInMessageOrder) {
  std::vector<std::string> names;
  for (const ops::Operator* op : ops::all_operators()) names.emplace_back(op->name());
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 4),
            (std::vector<std::string>{"conv2d", "depthwise_conv2d", "dense", "batch_matmul"}));
  EXPECT_EQ(ops::operator_names().rfind("conv2d, depthwise_conv2d, dense, batch_matmul", 0), 0u);
  EXPECT_EQ(ops::find_operator("dense"), &ops::dense_operator());
  EXPECT_EQ(ops::find_operator("dense_pack.x86"), nullptr);
}

TEST(OperatorRegistry, EveryKilnTemplateHasItsOperator) {
  for (const ops::Template* t : ops::all_templates()) {
    if (t->name().ends_with(".test")) continue;  // test-only templates registered by other tests
    const ops::Operator* op = ops::find_operator(t->op());
    ASSERT_NE(op, nullptr) << t->name();
    EXPECT_EQ(op->name(), t->op());
  }
}

TEST(OperatorRegistry, ImporterAcceptsTheOperatorsOnnxOpsOnce) {
  const std::vector<std::string>& supported = frontend::supported_ops();
  EXPECT_TRUE(std::is_sorted(supported.begin(), supported.end()));
  for (const ops::Operator* op : ops::all_operators()) {
    for (const std::string& type : op->onnx_ops()) {
      EXPECT_EQ(std::count(supported.begin(), supported.end(), type), 1) << type;
    }
  }
  EXPECT_TRUE(frontend::is_supported_op("Conv"));
  EXPECT_FALSE(frontend::is_supported_op("Softsign"));  // tests/test_op's, not kiln's
}

TEST(OperatorRegistry, NamingConv2dSelectsDepthwiseToo) {
  EXPECT_TRUE(ops::operator_selects("conv2d", "conv2d"));
  EXPECT_TRUE(ops::operator_selects("conv2d", "depthwise_conv2d"));
  EXPECT_TRUE(ops::operator_selects("conv2d", "group_conv2d"));
  EXPECT_FALSE(ops::operator_selects("group_conv2d", "conv2d"));
  EXPECT_TRUE(ops::operator_selects("depthwise_conv2d", "depthwise_conv2d"));
  EXPECT_FALSE(ops::operator_selects("depthwise_conv2d", "conv2d"));
  EXPECT_FALSE(ops::operator_selects("dense", "batch_matmul"));
  EXPECT_FALSE(ops::operator_selects("batch_matmul", "dense"));
  EXPECT_FALSE(ops::operator_selects("nonsense", "nonsense")) << "no operator's name";
}

TEST(OperatorRegistry, AnUntunedModelTakesTheTemplateTvmsStrategyPicks) {
  for (const ops::Operator* op : ops::all_operators()) {
    const std::vector<const ops::Template*> templates = ops::templates_for_op(op->name());
    EXPECT_LE(std::count_if(templates.begin(), templates.end(),
                            [](const ops::Template* t) { return t->untuned_choice(); }),
              1)
        << op->name();
  }
  const ops::TargetInfo avx512{16, 32, 2, 4, 48 * 1024, 1024 * 1024};
  const ops::Workload dense{"dense", {{"M", 1}, {"N", 1000}, {"K", 512}}};
  EXPECT_EQ(compiler::fallback_template(ops::templates_for_op("dense"), dense, avx512),
            &ops::dense_pack_template());
  // A stride-2 3x3 conv (a stride-1 one takes Winograd: conv2d_winograd_test.cc).
  const ops::Workload conv{"conv2d",
                           {{"N", 1},
                            {"C", 64},
                            {"H", 56},
                            {"W", 56},
                            {"K", 64},
                            {"R", 3},
                            {"S", 3},
                            {"pad", 1},
                            {"stride", 2}}};
  EXPECT_EQ(compiler::fallback_template(ops::templates_for_op("conv2d"), conv, avx512),
            &ops::conv2d_nchwc_template());
  EXPECT_EQ(compiler::fallback_template({}, conv, avx512), nullptr);
}

// An extra template replaces TVM's untuned choice only where it says so for the target: the
// ragged conv for a prime count of output channels (1 lane); not for 1000 on 16 lanes (the
// default's 25-lane blocks use 78 % of two vectors), 1001 (13 of 16 lanes: too small a gain for
// its NCHW output) or 24 (16-lane blocks waste as many lanes as the default's 24 in two
// vectors), nor on 8 lanes where 8 divides 1000.
TEST(OperatorRegistry, AnUntunedConvTakesRaggedBlocksWhereTvmsLeaveLanesEmpty) {
  const ops::TargetInfo avx512{16, 32, 2, 4, 48 * 1024, 1024 * 1024};
  const ops::TargetInfo avx2{8, 16, 2, 3, 32 * 1024, 512 * 1024};
  auto classifier = [](int64_t k) {
    return ops::Workload{"conv2d",
                         {{"N", 1}, {"C", 512}, {"H", 7}, {"W", 7}, {"K", k}, {"R", 1}, {"S", 1}}};
  };
  const std::vector<const ops::Template*> convs = ops::templates_for_op("conv2d");
  EXPECT_EQ(compiler::fallback_template(convs, classifier(997), avx512),
            &ops::conv2d_ragged_template());
  EXPECT_EQ(compiler::fallback_template(convs, classifier(997), avx2),
            &ops::conv2d_ragged_template());
  // Where the default's blocks fill the vectors well enough, not the ragged template: these 7x7
  // outputs take the flat template's pixel tiles where the direct template's one-vector blocks
  // leave its FMA chains short (conv2d_flat_test.cc), TVM's where two-vector blocks of 25 or 24
  // lanes do not, and so does a 3x3 conv.
  for (const auto& [k, target] :
       std::vector<std::pair<int64_t, ops::TargetInfo>>{{1001, avx512}, {1000, avx2}}) {
    EXPECT_EQ(compiler::fallback_template(convs, classifier(k), target),
              &ops::conv2d_flat_template())
        << k;
  }
  for (int64_t k : {1000, 24}) {
    EXPECT_EQ(compiler::fallback_template(convs, classifier(k), avx512),
              &ops::conv2d_nchwc_template())
        << k;
  }
  ops::Workload three = classifier(24);
  three.params["R"] = three.params["S"] = 3;
  EXPECT_EQ(compiler::fallback_template(convs, three, avx512), &ops::conv2d_nchwc_template());
}

}  // namespace
}  // namespace kiln
