// The code generator's target hooks (builder/codegen_target.h): new_codegen chooses the x86
// implementation for x86 triples and the generic one otherwise, and each takes its numbers from
// the target description. Compiled for fixed targets, never run.
#include "builder/codegen_target.h"

#include <gtest/gtest.h>

#include "builder/codegen_llvm.h"
#include "ops/registry.h"
#include "tests/fixed_target.h"

namespace kiln {
namespace {

using testing::fixed_target;

TEST(CodegenTarget, NewCodegenChoosesByArchitecture) {
  auto zen4 = builder::new_codegen(fixed_target("x86_64-pc-linux-gnu", "znver4"));
  EXPECT_EQ(zen4->name(), "x86");
  EXPECT_EQ(zen4->simd_lanes(), 16);
  auto neon = builder::new_codegen(fixed_target("aarch64-linux-gnu", "generic", "+neon"));
  EXPECT_EQ(neon->name(), "generic");
  EXPECT_EQ(neon->simd_lanes(), 4);
  EXPECT_EQ(neon->description().isa, "neon");
}

TEST(CodegenTarget, RegisterBudgetsComeFromTheDescription) {
  // AVX-512: 32 zmm of 16 floats; NEON: 32 q registers of 4.
  EXPECT_EQ(builder::new_codegen(fixed_target("x86_64-pc-linux-gnu", "znver4"))->register_floats(),
            512);
  EXPECT_EQ(
      builder::new_codegen(fixed_target("aarch64-linux-gnu", "cortex-a72"))->register_floats(),
      128);
  // Every x86 level keeps the emitter's budget of 32 registers of its width (AVX2: 32 x 8).
  EXPECT_EQ(builder::new_codegen(fixed_target("x86_64-pc-linux-gnu", "znver3"))->register_floats(),
            256);
}

// The functions' attribute group in the unoptimized IR of a small dense kernel.
std::string attributes_for(const Target& target) {
  const ops::Template* t = ops::find_template("dense_pack.x86");
  ops::Workload w = *t->normalize(*ops::Workload::parse("dense:M=4,N=32,K=16"));
  ops::TargetInfo info{target.simd_lanes()};
  auto program = t->instantiate(w, t->fallback(w, t->space(w), info), info);
  EXPECT_TRUE(program.ok()) << program.status().message();
  if (!program.ok()) return {};
  auto ir = builder::program_llvm_ir(*program, target, /*optimized=*/false);
  EXPECT_TRUE(ir.ok()) << ir.status().message();
  if (!ir.ok()) return {};
  size_t at = ir->find("attributes #0");
  return at == std::string::npos ? std::string() : ir->substr(at, ir->find('\n', at) - at);
}

TEST(CodegenTarget, OnlyAvx512FunctionsAskForWideVectors) {
  std::string zen4 = attributes_for(fixed_target("x86_64-pc-linux-gnu", "znver4"));
  EXPECT_NE(zen4.find("\"prefer-vector-width\"=\"512\""), std::string::npos) << zen4;
  EXPECT_NE(zen4.find("\"target-cpu\"=\"znver4\""), std::string::npos) << zen4;
  std::string zen3 = attributes_for(fixed_target("x86_64-pc-linux-gnu", "znver3"));
  EXPECT_EQ(zen3.find("prefer-vector-width"), std::string::npos) << zen3;
  std::string neon = attributes_for(fixed_target("aarch64-linux-gnu", "generic", "+neon"));
  EXPECT_NE(neon.find("\"target-features\"=\"+neon\""), std::string::npos) << neon;
  EXPECT_EQ(neon.find("prefer-vector-width"), std::string::npos) << neon;
}

}  // namespace
}  // namespace kiln
