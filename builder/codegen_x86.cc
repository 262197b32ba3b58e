// The x86 code generator: SSE to AVX-512 (the ISA level is the target description's).
#include "builder/codegen_target.h"

namespace kiln::builder {

namespace {

// The unrolling budget counts AVX-512's 32 registers at every x86 level, as the emitter always
// has: a budget from the level's own file (16 ymm on AVX2) would change the code AVX2 and SSE
// targets get, which is the CPU issues' decision, not this seam's.
constexpr int64_t kX86BudgetRegisters = 32;

class X86Codegen final : public CodegenTarget {
 public:
  using CodegenTarget::CodegenTarget;

  std::string_view name() const override { return "x86"; }

  int64_t register_floats() const override {
    return kX86BudgetRegisters * std::max(4, simd_lanes());
  }

  void set_function_attributes(llvm::Function& fn) const override {
    CodegenTarget::set_function_attributes(fn);
    if (description().widest().bits >= 512) {
      // Keep 512-bit vectors legal even on CPUs whose tuning prefers 256-bit ones.
      fn.addFnAttr("prefer-vector-width", "512");
      fn.addFnAttr("min-legal-vector-width", "512");
    }
  }
};

}  // namespace

std::unique_ptr<CodegenTarget> new_x86_codegen(const Target& target) {
  return std::make_unique<X86Codegen>(target);
}

}  // namespace kiln::builder
