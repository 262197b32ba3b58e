// The target hooks of the code generator (codegen_llvm.h): everything the IR -> LLVM emitter
// asks about the machine it generates code for. The emitter itself is target-independent; it
// holds one CodegenTarget, chosen by new_codegen(target):
//  - x86 (codegen_x86.cc): x86-64 and i?86 triples, SSE to AVX-512;
//  - generic (codegen_generic.cc): every other triple LLVM can generate code for (aarch64 NEON
//    among them), with LLVM's own lowering of vectors, gathers and math.
// The numbers (vector width, register files, caches) come from the target description
// (exchange/target_description.h), never from constants here. A new target is a row there and,
// when its LLVM attributes or lowering differ, a subclass here registered in new_codegen.
//
// Implementations are immutable after construction, so one may serve several threads.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>

#include "exchange/target.h"
#include "exchange/target_description.h"
#include "ir/ir.h"

namespace kiln::builder {

class CodegenTarget {
 public:
  explicit CodegenTarget(const Target& target);
  virtual ~CodegenTarget() = default;

  const Target& target() const { return target_; }
  const TargetDescription& description() const { return description_; }
  // Which implementation this is: "x86" or "generic".
  virtual std::string_view name() const = 0;
  // float32 lanes of the widest vector.
  int simd_lanes() const { return description_.simd_lanes(); }

  // Vector registers: how many floats a local buffer may hold for the emitter to unroll a
  // serial loop over it (so that its indices are constants and it stays in registers); the
  // target description's (TargetDescription::register_floats).
  int64_t register_floats() const { return description_.register_floats(); }

  // Data layout: the module's triple and layout, from the target machine.
  virtual void configure_module(llvm::Module& module, const llvm::TargetMachine& tm) const;
  // Options of the target machine the module is optimized and emitted with.
  virtual llvm::TargetOptions target_options() const;
  // Attributes every emitted function (stages and their outlined parallel bodies) carries.
  virtual void set_function_attributes(llvm::Function& fn) const;

  // Math lowering: op(a[, b]) for ir::CallOp (codegen_math.h has the contract).
  virtual llvm::Value* emit_math(llvm::IRBuilder<>& b, llvm::Module& module, ir::CallOp op,
                                 llvm::Value* a, llvm::Value* second = nullptr) const;

  // Intrinsics for vector accesses at non-contiguous addresses (a vector of pointers): a gather
  // of `type` and a scatter of `value`, 4-byte aligned, all lanes active.
  virtual llvm::Instruction* emit_gather(llvm::IRBuilder<>& b, llvm::Type* type,
                                         llvm::Value* pointers) const;
  virtual llvm::Instruction* emit_scatter(llvm::IRBuilder<>& b, llvm::Value* value,
                                          llvm::Value* pointers) const;

 private:
  Target target_;
  TargetDescription description_;
};

// The code generator for `target`'s architecture (see the list above).
std::unique_ptr<CodegenTarget> new_codegen(const Target& target);

// The implementations new_codegen chooses from.
std::unique_ptr<CodegenTarget> new_x86_codegen(const Target& target);
std::unique_ptr<CodegenTarget> new_generic_codegen(const Target& target);

}  // namespace kiln::builder
