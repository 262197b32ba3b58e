// End to end: the real `kiln` binary, run as a child process.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "tests/run_kiln.h"

namespace kiln {
namespace {

using testing::CommandResult;

CommandResult kiln(const std::string& args) { return testing::run_kiln(args); }

size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

const char* kConv7x7 = "conv2d:N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3";

TEST(Cli, SpaceMatchesAutoTvm) {
  CommandResult r = kiln(std::string("space --workload ") + kConv7x7);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("conv2d_NCHWc.x86"), std::string::npos);
  EXPECT_NE(r.output.find("space size: 308 configs"), std::string::npos) << r.output;

  r = kiln("space --workload dense:M=1,N=1000,K=512 --template dense_nopack.x86");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("space size: 160 configs"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("dense_pack.x86"), std::string::npos);

  // Without --template, every template of the operator.
  r = kiln("space --workload dense:M=1,N=1000,K=512");
  EXPECT_NE(r.output.find("dense_nopack.x86"), std::string::npos);
  EXPECT_NE(r.output.find("dense_pack.x86"), std::string::npos);
}

TEST(Cli, ShowDecodesLogIndices) {
  CommandResult r = kiln(std::string("show --workload ") + kConv7x7 + " --config 172");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(
      r.output.find(
          R"([["tile_ic","sp",[-1,1]],["tile_oc","sp",[-1,4]],["tile_ow","sp",[-1,1]],["unroll_kw","ot",false]])"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("for "), std::string::npos);  // the lowered loop nest

  r = kiln(std::string("show --workload ") + kConv7x7 + " --config 47");
  EXPECT_NE(
      r.output.find(
          R"([["tile_ic","sp",[-1,3]],["tile_oc","sp",[-1,4]],["tile_ow","sp",[-1,64]],["unroll_kw","ot",true]])"),
      std::string::npos)
      << r.output;

  r = kiln("show --workload dense:M=1,N=1000,K=512 --template dense_nopack.x86 --config 68");
  EXPECT_NE(
      r.output.find(R"([["tile_y","sp",[-1,1]],["tile_x","sp",[-1,8]],["tile_k","sp",[-1,16]]])"),
      std::string::npos)
      << r.output;
}

TEST(Cli, BadInputIsOneLineAndExitCodeTwo) {
  for (const char* args :
       {"space --workload dense:M=1,N=2",          // missing K
        "space --workload dense:M=1,N=2,K=x",      // not an integer
        "space --workload dense:M=1,N=2,K=3,Q=4",  // unknown key
        "space --workload nosuchop:M=1",           // unknown operator
        "space --workload garbage",                // no colon
        "space --workload dense:M=0,N=2,K=3",      // out of range
        "space --workload dense:M=4,N=4,K=4 --template conv2d_NCHWc.x86",
        "show --workload dense:M=4,N=4,K=4 --template dense_nopack.x86 --config 99999",
        "show --workload dense:M=4,N=4,K=4 --template dense_nopack.x86 --config -1",
        "measure --workload dense:M=4,N=4,K=4 --target cuda"}) {
    CommandResult r = kiln(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_EQ(count_lines(r.output), 1u) << args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("kiln: ", 0), 0u) << args << "\n" << r.output;
  }
}

TEST(Cli, MeasureChecksAndTimesTheDefaultConfig) {
  CommandResult r = kiln("measure --workload dense:M=32,N=48,K=64 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dense_nopack.x86"), std::string::npos);
  EXPECT_NE(r.output.find("dense_pack.x86"), std::string::npos);
  EXPECT_NE(r.output.find("GFLOPS"), std::string::npos);
  EXPECT_NE(r.output.find("(default)"), std::string::npos) << r.output;

  // AutoTVM's fallback stays available.
  r = kiln("measure --workload dense:M=32,N=48,K=64 --threads 1 --fallback --number 2 --repeat 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(fallback)"), std::string::npos) << r.output;

  r = kiln(
      "measure --workload conv2d:N=1,C=8,H=10,W=10,K=16,R=3,S=3,stride=1,pad=1 --config 3 "
      "--number 2 --repeat 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("relative error"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kiln
