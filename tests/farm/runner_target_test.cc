// `kiln runner` registers the machine's target, which kiln now hands the runner library
// (builder::host_target(); the library itself links no LLVM): the CPU `kiln farm status` shows
// for a real runner is this machine's, as the LLVM-free detection (exchange/host_target.h) names
// it too.
#include <gtest/gtest.h>

#include "exchange/host_target.h"
#include "tests/farm/farm_fixture.h"

namespace kiln::farm::testing {
namespace {

class RunnerTarget : public FarmFixture {};

TEST_F(RunnerTarget, RegistersThisMachinesCpu) {
  std::unique_ptr<KilnProcess> box = start_runner("box-target");
  ASSERT_NE(box, nullptr);
  nlohmann::json r = runner("box-target");
  ASSERT_FALSE(r.is_null()) << status();
  EXPECT_EQ(r["target_cpu"], host_target_without_llvm().cpu) << r;
  EXPECT_NE(r["target_cpu"], "") << r;
}

}  // namespace
}  // namespace kiln::farm::testing
