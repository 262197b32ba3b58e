// Cross-compilation: the builder turns real template configs into aarch64 shared objects (checked
// by their ELF header), and this x86-64 machine refuses to load them with a clear error.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>

#include "builder/build.h"
#include "builder/target.h"
#include "ops/registry.h"
#include "runtime/artifact.h"
#include "runtime/elf_machine.h"

namespace kiln {
namespace {

constexpr const char* kArmTarget = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";

std::string build_fallback(const char* template_name, const char* workload, const Target& target) {
  const ops::Template* tmpl = ops::find_template(template_name);
  EXPECT_NE(tmpl, nullptr) << template_name;
  if (!tmpl) return {};
  ops::Workload w = *tmpl->normalize(*ops::Workload::parse(workload));
  ops::TargetInfo info{.simd_lanes = target.simd_lanes()};
  ConfigEntity config = tmpl->fallback(w, tmpl->space(w), info);
  Result<ir::Program> program = tmpl->instantiate(w, config, info);
  EXPECT_TRUE(program.ok()) << program.status().message();
  if (!program.ok()) return {};
  Result<builder::BuildOutput> built = builder::build_program(*program, target);
  EXPECT_TRUE(built.ok()) << template_name << ": " << built.status().message();
  return built.ok() ? built->shared_object : std::string();
}

TEST(CrossCompile, Aarch64TargetParsesWithNeonWidthVectors) {
  Result<Target> arm = builder::parse_target(kArmTarget);
  ASSERT_TRUE(arm.ok()) << arm.status().message();
  EXPECT_EQ(arm->triple, "aarch64-linux-gnu");
  EXPECT_EQ(arm->cpu, "cortex-a72");
  EXPECT_EQ(arm->simd_lanes(), 4);
  EXPECT_EQ(arm->to_string(), "llvm -mcpu=cortex-a72 -mtriple=aarch64-linux-gnu");
  EXPECT_EQ(builder::parse_target("llvm -mtriple=aarch64-linux-gnu")->cpu, "generic");
  EXPECT_FALSE(builder::parse_target("llvm -mtriple=aarch64-linux-gnu -mcpu=znver4").ok());
}

TEST(CrossCompile, TemplatesBuildValidAarch64SharedObjects) {
  Target arm = *builder::parse_target(kArmTarget);
  for (auto [tmpl, workload] :
       {std::pair{"dense_pack.x86", "dense:M=8,N=32,K=64"},
        std::pair{"conv2d_NCHWc.x86", "conv2d:N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1"},
        std::pair{"depthwise_conv2d_NCHWc.x86",
                  "depthwise_conv2d:N=1,C=32,H=14,W=14,R=3,S=3,stride=1,pad=1"}}) {
    std::string so = build_fallback(tmpl, workload, arm);
    ASSERT_GE(so.size(), sizeof(Elf64_Ehdr)) << tmpl;
    Elf64_Ehdr header;
    std::memcpy(&header, so.data(), sizeof header);
    EXPECT_EQ(std::memcmp(header.e_ident, ELFMAG, SELFMAG), 0) << tmpl;
    EXPECT_EQ(header.e_ident[EI_CLASS], ELFCLASS64) << tmpl;
    EXPECT_EQ(header.e_ident[EI_DATA], ELFDATA2LSB) << tmpl;
    EXPECT_EQ(header.e_machine, EM_AARCH64) << tmpl;
    EXPECT_EQ(header.e_type, ET_DYN) << tmpl;
    EXPECT_EQ(*elf_machine_name(so), "aarch64");
  }
}

TEST(CrossCompile, ThisMachineRefusesToLoadAnotherArchitecturesCode) {
  std::string so =
      build_fallback("dense_pack.x86", "dense:M=8,N=32,K=64", *builder::parse_target(kArmTarget));
  auto loaded = Artifact::load_from_bytes(so, "arm-dense");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kRuntime);
  EXPECT_EQ(loaded.status().message(),
            "artifact 'arm-dense': code for aarch64; this machine runs " + host_machine_name());
  // The host's own build of the same config loads.
  std::string native =
      build_fallback("dense_pack.x86", "dense:M=8,N=32,K=64", builder::host_target());
  EXPECT_TRUE(Artifact::load_from_bytes(native, "native-dense").ok());
  EXPECT_FALSE(check_runs_here("not an elf file at all, just text", "junk").ok());
}

}  // namespace
}  // namespace kiln
