// The operator registry (ops/registry.h): kiln's own operators in their fixed order, one for
// every template's operator, and the ONNX op types they map accepted by the importer once each.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace kiln
