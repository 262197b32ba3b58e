// The x86 code generator: SSE to AVX-512 (the ISA level is the target description's).
#include "builder/codegen_target.h"

namespace kiln::builder {

namespace {

class X86Codegen final : public CodegenTarget {
 public:
  using CodegenTarget::CodegenTarget;

  std::string_view name() const override { return "x86"; }

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
