// `kiln compile` for a CPU this machine is not: it compiles (the model's constant stages run from
// a host build of its kernels, never the target's code), and `kiln run` of the result here
// refuses clearly. builder::runs_on_host is the check that decides.
#include <gtest/gtest.h>

#include <string>

#include "builder/target.h"
#include "tests/onnx_models.h"
#include "tests/run_kiln.h"

namespace kiln {
namespace {

using testing::OnnxModel;
using testing::run_kiln;

// A conv and a dense layer: both pack their weights in constant stages at compile time.
std::string conv_dense_model() {
  OnnxModel m;
  m.input("X", {1, 16, 8, 8});
  m.weight("W", {16, 16, 3, 3}, 0.01f);
  m.weight("F", {1024, 10}, 0.01f);
  OnnxModel::attr(m.node("Conv", {"X", "W"}, {"C"}, "conv"), "pads",
                  std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"C"}, {"R"}, "relu");
  m.node("Flatten", {"R"}, {"Flat"}, "flatten");
  m.node("MatMul", {"Flat", "F"}, {"Y"}, "fc");
  m.output("Y");
  return m.write("conv_dense");
}

// An x86 CPU whose LLVM model has a feature this host lacks, found by asking runs_on_host, so
// the tests hold on any host (an AMD host lacks AMX; a Sapphire Rapids host, a Zen 5's
// avx512vp2intersect or Granite Rapids' amx-fp16). Empty if the host has every one's features.
std::string foreign_x86_cpu() {
  for (const char* cpu : {"sapphirerapids", "graniterapids", "znver5", "znver4", "cascadelake"}) {
    Result<Target> t = builder::parse_target(std::string("llvm -mcpu=") + cpu);
    if (t.ok() && !builder::runs_on_host(*t).ok()) return cpu;
  }
  return "";
}

TEST(CrossTargetCompile, RunsOnHostNamesWhatTheHostLacks) {
  EXPECT_TRUE(builder::runs_on_host(builder::host_target()).ok());
  Status arm = builder::runs_on_host(
      *builder::parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"));
  EXPECT_NE(arm.message().find("code for aarch64; this machine runs x86_64"), std::string::npos)
      << arm.message();
  // Sapphire Rapids has AMX, which no AMD CPU has; an Intel host lacks some Zen 5 feature.
  ASSERT_TRUE(builder::parse_target("llvm -mcpu=sapphirerapids").ok());
  const std::string cpu = foreign_x86_cpu();
  if (cpu.empty()) GTEST_SKIP() << "the host has the features of every candidate CPU";
  Status s = builder::runs_on_host(*builder::parse_target("llvm -mcpu=" + cpu));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs CPU feature '"), std::string::npos) << s.message();
}

// AVX2 code for an older CPU runs on a newer AVX-512 one, although the older CPU's LLVM model
// names system features (pku, mwaitx, wbnoinvd) that a VM may hide: kernels never hold those.
TEST(CrossTargetCompile, AnOlderCpusAvx2CodeRunsOnAnAvx512Host) {
  const Target host = builder::host_target();
  if (!host.has_feature("avx512f") || !host.has_feature("avx2") || !host.has_feature("fma")) {
    GTEST_SKIP() << "the host (" << host.cpu << ") has no AVX-512";
  }
  const char* older = host.cpu.starts_with("znver") ? "llvm -mcpu=znver3" : "llvm -mcpu=haswell";
  Result<Target> t = builder::parse_target(older);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Status s = builder::runs_on_host(*t);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(CrossTargetCompile, CompilesForABoardAndRunRefusesHere) {
  const std::string model = conv_dense_model();
  const std::string out = OnnxModel::temp_path("arm.kiln");
  auto r = run_kiln("compile " + model +
                    " --target 'llvm -mtriple=aarch64-linux-gnu "
                    "-mcpu=cortex-a72' -o " +
                    out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + out), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note: target 'llvm -mcpu=cortex-a72 -mtriple=aarch64-linux-gnu': code "
                          "for aarch64; this machine runs x86_64; none of its code ran here"),
            std::string::npos)
      << r.output;
  r = run_kiln("run " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("foreign target"), std::string::npos) << r.output;
}

TEST(CrossTargetCompile, CompilesForACpuWithFeaturesTheHostLacks) {
  const std::string cpu = foreign_x86_cpu();
  if (cpu.empty()) GTEST_SKIP() << "the host has the features of every candidate CPU";
  const std::string model = conv_dense_model();
  const std::string out = OnnxModel::temp_path("foreign.kiln");
  auto r = run_kiln("compile " + model + " --target 'llvm -mcpu=" + cpu + "' -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + out), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("needs CPU feature '"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("none of its code ran here"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kiln
