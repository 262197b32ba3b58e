// The generic code generator: any triple LLVM generates code for (aarch64 NEON among them),
// with LLVM's own lowering of vectors, gathers and math (the base class's hooks).
#include "builder/codegen_target.h"

namespace kiln::builder {

namespace {

class GenericCodegen final : public CodegenTarget {
 public:
  using CodegenTarget::CodegenTarget;

  std::string_view name() const override { return "generic"; }
};

}  // namespace

std::unique_ptr<CodegenTarget> new_generic_codegen(const Target& target) {
  return std::make_unique<GenericCodegen>(target);
}

}  // namespace kiln::builder
