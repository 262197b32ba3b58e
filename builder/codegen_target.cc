#include "builder/codegen_target.h"

#include "builder/codegen_math.h"

namespace kiln::builder {

CodegenTarget::CodegenTarget(const Target& target)
    : target_(target), description_(describe(target)) {}

void CodegenTarget::configure_module(llvm::Module& module, const llvm::TargetMachine& tm) const {
  module.setTargetTriple(target_.triple);
  module.setDataLayout(tm.createDataLayout());
}

llvm::TargetOptions CodegenTarget::target_options() const {
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // a*b+c may become an FMA, as in TVM
  return options;
}

void CodegenTarget::set_function_attributes(llvm::Function& fn) const {
  fn.addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) fn.addFnAttr("target-features", target_.features);
  fn.addFnAttr(llvm::Attribute::NoUnwind);
}

llvm::Value* CodegenTarget::emit_math(llvm::IRBuilder<>& b, llvm::Module& module, ir::CallOp op,
                                      llvm::Value* a, llvm::Value* second) const {
  return emit_math_call(b, module, op, a, second);
}

llvm::Instruction* CodegenTarget::emit_gather(llvm::IRBuilder<>& b, llvm::Type* type,
                                              llvm::Value* pointers) const {
  return b.CreateMaskedGather(type, pointers, llvm::Align(4));
}

llvm::Instruction* CodegenTarget::emit_scatter(llvm::IRBuilder<>& b, llvm::Value* value,
                                               llvm::Value* pointers) const {
  return b.CreateMaskedScatter(value, pointers, llvm::Align(4));
}

std::unique_ptr<CodegenTarget> new_codegen(const Target& target) {
  if (describe(target).arch == TargetArch::kX86) return new_x86_codegen(target);
  return new_generic_codegen(target);
}

}  // namespace kiln::builder
