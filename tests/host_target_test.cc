// The host target without LLVM (exchange/host_target.h) against LLVM's own detection
// (builder::host_target) on this machine: the same triple and CPU name, and the same sign for
// every feature it reports.
#include "exchange/host_target.h"

#include <gtest/gtest.h>

#include <string>

#include "builder/target.h"
#include "exchange/target_description.h"

namespace kiln {
namespace {

// '+', '-', or 0 where `features` does not name `name`.
char sign_of(const std::string& features, std::string_view name) {
  const std::string list = "," + features + ",";
  for (char sign : {'+', '-'}) {
    if (list.find("," + std::string(1, sign) + std::string(name) + ",") != std::string::npos) {
      return sign;
    }
  }
  return 0;
}

TEST(HostTargetWithoutLlvm, NamesThisMachineAsLlvmDoes) {
  const Target llvm = builder::host_target();
  const Target mine = host_target_without_llvm();
  EXPECT_EQ(mine.triple, llvm.triple);
  EXPECT_EQ(mine.cpu, llvm.cpu);
  ASSERT_FALSE(host_feature_names().empty());
  for (std::string_view name : host_feature_names()) {
    EXPECT_NE(sign_of(mine.features, name), 0) << name << " missing from " << mine.features;
    EXPECT_EQ(sign_of(mine.features, name), sign_of(llvm.features, name)) << name;
  }
  EXPECT_EQ(mine.simd_lanes(), llvm.simd_lanes());
  EXPECT_EQ(describe(mine).isa, describe(llvm).isa);
  EXPECT_FALSE(mine.explicit_features);
  EXPECT_FALSE(mine.explicit_triple);
}

}  // namespace
}  // namespace kiln
