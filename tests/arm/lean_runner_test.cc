// The lean kiln-runner on this machine: it runs a compiled model as `kiln run` does (a board runs
// what was tuned and compiled for it), refuses bad input with kiln's messages and exit codes, and
// serves the farm as `kiln runner` does, registering the target it detects without LLVM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "tests/arm/arm_support.h"

namespace kiln::arm {
namespace {

using kiln::testing::run_kiln;
using kiln::testing::run_shell;
using ::testing::HasSubstr;

TEST(LeanRunner, RunsACompiledModelToTheReferenceOutput) {
  kiln::testing::TempDir dir("kiln-lean");
  const std::string model = dir.file("mlp.kiln");
  kiln::testing::CommandResult compile = run_kiln("compile " + mlp_dir() + "/mlp.onnx -o " + model);
  ASSERT_EQ(compile.exit_code, 0) << compile.output;
  const std::string out = dir.file("out.bin");
  kiln::testing::CommandResult run = run_shell(std::string(KILN_RUNNER_BINARY) + " run " + model +
                                               " --input " + mlp_dir() + "/input.bin -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_LE(relative_max_error(read_floats(out), read_floats(mlp_dir() + "/output.bin")), 1e-4);
}

TEST(LeanRunner, BadInputIsOneLineAndExitCodeTwo) {
  kiln::testing::TempDir dir("kiln-lean");
  const std::string junk = dir.file("junk.kiln");
  std::ofstream(junk) << "not a model";
  kiln::testing::CommandResult run = run_shell(std::string(KILN_RUNNER_BINARY) + " run " + junk);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("kiln-runner: "));
  EXPECT_THAT(run.output, HasSubstr(junk));
  kiln::testing::CommandResult bad = run_shell(std::string(KILN_RUNNER_BINARY) +
                                               " runner --tracker 127.0.0.1:1 --key k "
                                               "--exec-prefix no-such-emulator-here");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--exec-prefix: 'no-such-emulator-here' is not found on PATH"));
}

class LeanRunnerFarm : public farm::testing::FarmFixture {};

// Registration, the lease, signed artifacts and the reference check, through `kiln tune`.
TEST_F(LeanRunnerFarm, ServesATuneAsKilnRunnerDoes) {
  farm::testing::ChildProcess runner(KILN_RUNNER_BINARY,
                                     {"runner", "--tracker", tracker_->address(), "--key", "k1",
                                      "--name", "lean1", "--certs", certs_},
                                     "kiln runner lean1 listening on ");
  ASSERT_FALSE(runner.address().empty()) << runner.output();
  ASSERT_TRUE(farm::testing::wait_until(60, [&] { return state_of("lean1") == "free"; }))
      << status();
  const std::string db = dir_.file("t.db");
  kiln::testing::CommandResult tune =
      run_kiln(joined(tune_args(db, "dense:M=16,N=32,K=16", 4, /*cooldown_s=*/0)));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  std::vector<farm::testing::Record> rs = farm::testing::records(db);
  ASSERT_EQ(rs.size(), 4u) << tune.output;
  for (const farm::testing::Record& r : rs) EXPECT_EQ(r.error_no, 0) << r.message;
  EXPECT_EQ(trials_of("lean1"), 4);
}

}  // namespace
}  // namespace kiln::arm
