// KILN_CHECK and KILN_UNREACHABLE: always on (also in the NDEBUG build the tests run in), one
// line naming the place and the condition, then abort.
#include "common/check.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

int checked_half(int even) {
  KILN_CHECK(even % 2 == 0) << "expected an even number, got " << even;
  return even / 2;
}

TEST(CheckDeathTest, AFailedCheckNamesTheConditionAndMessageAndAborts) {
  EXPECT_EQ(checked_half(4), 2);
  EXPECT_DEATH(checked_half(3),
               "kiln: internal error at .*check_test.cc:[0-9]+: check `even % 2 == 0` failed: "
               "expected an even number, got 3");
}

TEST(CheckDeathTest, UnreachableAborts) {
  EXPECT_DEATH(KILN_UNREACHABLE("an enum value without a case"),
               "unreachable code was reached.*an enum value without a case");
}

}  // namespace
}  // namespace kiln
