#include "builder/codegen_llvm.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "builder/codegen_target.h"
#include "builder/llvm_init.h"
#include "builder/lower.h"
#include "ir/analysis.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "runtime/kernel_abi.h"

namespace kiln::builder {

namespace {

constexpr int64_t kMaxLocalBytes = 64 * 1024;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Emits the LLVM IR of a program's stages into one module.
class CodeGen {
 public:
  CodeGen(llvm::LLVMContext& ctx, llvm::Module& module, const CodegenTarget& target,
          const ir::Program& program)
      : ctx_(ctx), module_(module), target_(target), program_(program), b_(ctx) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);  // a*b+c may become an FMA, as TVM's LLVM backend allows
    b_.setFastMathFlags(fmf);
    i64_ = b_.getInt64Ty();
    f32_ = b_.getFloatTy();
    ptr_ = b_.getPtrTy();
    make_alias_scopes();
  }

  Status emit_stage(const ir::Stage& stage) {
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr_, ptr_}, false);
    llvm::Function* fn =
        llvm::Function::Create(type, llvm::Function::ExternalLinkage, stage.name, module_);
    set_attributes(fn);
    st_ = FunctionState{};
    touched_.clear();
    st_.fn = fn;
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
    st_.alloca_block = entry;
    b_.SetInsertPoint(entry);
    st_.api = fn->getArg(1);
    for (size_t i = 0; i < program_.buffers.size(); ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr_, fn->getArg(0), i);
      llvm::LoadInst* p = b_.CreateLoad(ptr_, slot, program_.buffers[i]->name);
      p->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(ctx_, {}));
      st_.buffers[program_.buffers[i].get()] = p;
    }
    const LoweredStage lowered =
        lower_stage(stage.body, {target_.register_floats(), target_.simd_lanes()});
    lowered_ = &lowered;
    emit(lowered.body);
    lowered_ = nullptr;
    b_.CreateRetVoid();
    if (!status_.ok()) return CompileError("stage " + stage.name + ": " + status_.message());
    emit_buffer_table(stage);
    return Status::Ok();
  }

 private:
  struct FunctionState {
    llvm::Function* fn = nullptr;
    llvm::BasicBlock* alloca_block = nullptr;
    llvm::Value* api = nullptr;
    std::unordered_map<const ir::ExprNode*, llvm::Value*> vars;
    std::unordered_map<const ir::BufferNode*, llvm::Value*> buffers;
    bool in_parallel = false;
  };

  // The stage's buffer table (kernel_abi.h): its program's buffer count, then per buffer the
  // floats it spans where the stage touches it, 0 where it does not.
  void emit_buffer_table(const ir::Stage& stage) {
    std::vector<uint64_t> table = {program_.buffers.size()};
    for (const ir::Buffer& buffer : program_.buffers) {
      uint64_t floats = 1;
      for (int64_t d : buffer->shape) floats *= static_cast<uint64_t>(d);
      table.push_back(touched_.count(buffer.get()) ? std::max<uint64_t>(1, floats) : 0);
    }
    llvm::Constant* init = llvm::ConstantDataArray::get(ctx_, table);
    new llvm::GlobalVariable(module_, init->getType(), /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage, init,
                             stage.name + KILN_BUFFER_TABLE_SUFFIX);
  }

  void fail(const std::string& message) {
    if (status_.ok()) status_ = CompileError(message);
  }

  void set_attributes(llvm::Function* fn) { target_.set_function_attributes(*fn); }

  // Distinct buffers never overlap: one alias scope per buffer, and every access declares it
  // does not alias the other buffers' scopes.
  void make_alias_scopes() {
    std::vector<const ir::BufferNode*> all;
    for (const ir::Buffer& b : program_.buffers) all.push_back(b.get());
    for (const ir::Stage& s : program_.stages) collect_allocations(s.body, &all);
    llvm::MDBuilder md(ctx_);
    llvm::MDNode* domain = md.createAliasScopeDomain("kiln.buffers");
    std::vector<llvm::Metadata*> scopes;
    // Anonymous (distinct) scopes: createAliasScope uniques a scope by its name, so two buffers
    // of one name (each row_reduce allocates an "acc") would share a scope and each access would
    // declare that it does not alias its own buffer.
    for (const ir::BufferNode* b : all) {
      scopes.push_back(md.createAnonymousAliasScope(domain, b->name));
    }
    for (size_t i = 0; i < all.size(); ++i) {
      std::vector<llvm::Metadata*> others;
      for (size_t j = 0; j < all.size(); ++j) {
        if (j != i) others.push_back(scopes[j]);
      }
      alias_[all[i]] = {llvm::MDNode::get(ctx_, {scopes[i]}), llvm::MDNode::get(ctx_, others)};
    }
  }

  // Appends the local buffers `s` allocates to `out`, outermost first.
  static void collect_allocations(const ir::Stmt& s, std::vector<const ir::BufferNode*>* out) {
    class Allocations : public ir::IRVisitor {
     public:
      explicit Allocations(std::vector<const ir::BufferNode*>* out) : out_(out) {}
      using IRVisitor::visit;
      void visit(const ir::Expr&) override {}  // expressions allocate nothing

     protected:
      void visit_allocate(const ir::Stmt& s) override {
        out_->push_back(s->buffer.get());
        IRVisitor::visit_allocate(s);
      }

     private:
      std::vector<const ir::BufferNode*>* out_;
    };
    Allocations(out).visit(s);
  }

  void annotate(llvm::Instruction* inst, const ir::BufferNode* buffer) {
    auto it = alias_.find(buffer);
    if (it == alias_.end()) return;
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, it->second.first);
    inst->setMetadata(llvm::LLVMContext::MD_noalias, it->second.second);
  }

  llvm::Value* buffer_ptr(const ir::Buffer& buffer) {
    auto it = st_.buffers.find(buffer.get());
    touched_.insert(buffer.get());
    if (it != st_.buffers.end()) return it->second;
    fail("buffer " + buffer->name + " is used outside its allocation");
    return llvm::ConstantPointerNull::get(ptr_);
  }

  // ---- Expressions -------------------------------------------------------------------------

  bool is_vector(llvm::Value* v) const { return v->getType()->isVectorTy(); }

  llvm::Value* widen(llvm::Value* v) {
    if (lanes_ == 0 || is_vector(v)) return v;
    return b_.CreateVectorSplat(lanes_, v);
  }

  // Makes both operands scalars or both vectors of the current width.
  void match(llvm::Value*& a, llvm::Value*& b) {
    if (is_vector(a) != is_vector(b)) {
      a = widen(a);
      b = widen(b);
    }
  }

  llvm::Value* constant_like(llvm::Value* like, int64_t value) {
    llvm::Constant* c = llvm::ConstantInt::get(i64_, value);
    if (is_vector(like)) {
      return llvm::ConstantVector::getSplat(
          llvm::cast<llvm::VectorType>(like->getType())->getElementCount(), c);
    }
    return c;
  }

  llvm::Value* lane_ids() {
    std::vector<llvm::Constant*> ids;
    for (int i = 0; i < lanes_; ++i) ids.push_back(llvm::ConstantInt::get(i64_, i));
    return llvm::ConstantVector::get(ids);
  }

  // a / b (quotient) or a % b on integers, with floor semantics (ir/ir.h); `e` is the expression.
  llvm::Value* floor_div_or_mod(bool quotient, llvm::Value* a, llvm::Value* b, const ir::Expr& e) {
    int64_t divisor = 0;
    if (ir::is_const_int(e->b, &divisor) && divisor == 0) {
      fail("division by zero in " + ir::to_string(e));
      return a;
    }
    llvm::Value* q = b_.CreateSDiv(a, b);
    llvm::Value* r = b_.CreateSRem(a, b);
    // Truncating division rounds toward zero; floor division differs when the remainder is
    // non-zero and its sign differs from the divisor's.
    llvm::Value* zero = constant_like(a, 0);
    llvm::Value* adjust = divisor > 0 ? b_.CreateICmpSLT(r, zero)
                                      : b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                                     b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
    if (quotient) return b_.CreateSub(q, b_.CreateZExt(adjust, q->getType()));
    return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
  }

  // Expressions: one hook per kind (ir/kinds.h), and for the binary kinds one instruction
  // builder per kind (op_<name>).
  llvm::Value* emit(const ir::Expr& e) {
    static constexpr llvm::Value* (CodeGen::*kHooks[])(const ir::Expr&) =
        KILN_IR_EXPR_HOOK_TABLE(CodeGen, emit_);
    return ir::call_hook(*this, kHooks, e);
  }

  llvm::Value* emit_int_imm(const ir::Expr& e) { return b_.getInt64(e->int_value); }
  llvm::Value* emit_float_imm(const ir::Expr& e) {
    return llvm::ConstantFP::get(f32_, e->float_value);
  }

  llvm::Value* emit_var(const ir::Expr& e) {
    if (e.get() == lane_var_) return lane_ids();
    auto it = st_.vars.find(e.get());
    if (it != st_.vars.end()) return it->second;
    fail("unbound variable " + e->name);
    return b_.getInt64(0);
  }

  llvm::Value* emit_not(const ir::Expr& e) { return b_.CreateNot(emit(e->a)); }

  llvm::Value* emit_select(const ir::Expr& e) {
    llvm::Value* c = emit(e->a);
    llvm::Value* t = emit(e->b);
    llvm::Value* f = emit(e->c);
    if (is_vector(c) || is_vector(t) || is_vector(f)) {
      c = widen(c);
      t = widen(t);
      f = widen(f);
    }
    return b_.CreateSelect(c, t, f);
  }

  llvm::Value* emit_call(const ir::Expr& e) {
    llvm::Value* a = emit(e->a);
    if (!e->b.defined()) return target_.emit_math(b_, module_, e->call_op, a);
    llvm::Value* b = emit(e->b);
    match(a, b);
    return target_.emit_math(b_, module_, e->call_op, a, b);
  }

  llvm::Value* emit_binary(const ir::Expr& e) {
    llvm::Value* a = emit(e->a);
    llvm::Value* b = emit(e->b);
    match(a, b);
    bool fp = e->a->dtype == ir::DType::kFloat32;
    if (fp) return binary_op(e, a, b, true);
    // Index arithmetic repeats across unrolled iterations (every access recomputes its index
    // from the loop variables): emit each distinct operation once per basic block instead of
    // leaving thousands of duplicates for LLVM to clean up.
    if (b_.GetInsertBlock() != int_ops_block_) {
      int_ops_.clear();
      int_ops_block_ = b_.GetInsertBlock();
    }
    llvm::Value*& known = int_ops_[{static_cast<int>(e->kind), a, b}];
    if (!known) known = binary_op(e, a, b, false);
    return known;
  }

  // The instruction of binary expression `e` on its emitted operands, float or integer.
  llvm::Value* binary_op(const ir::Expr& e, llvm::Value* a, llvm::Value* b, bool fp) {
    static constexpr llvm::Value* (CodeGen::*kOps[])(const ir::Expr&, llvm::Value*, llvm::Value*,
                                                     bool) =
        KILN_IR_BINARY_HOOK_TABLE(CodeGen, op_);
    return (this->*kOps[ir::binary_kind_index(e->kind)])(e, a, b, fp);
  }

  llvm::Value* op_add(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b, "", false, true);
  }
  llvm::Value* op_sub(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b, "", false, true);
  }
  llvm::Value* op_mul(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b, "", false, true);
  }
  llvm::Value* op_div(const ir::Expr& e, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFDiv(a, b) : floor_div_or_mod(true, a, b, e);
  }
  llvm::Value* op_mod(const ir::Expr& e, llvm::Value* a, llvm::Value* b, bool) {
    return floor_div_or_mod(false, a, b, e);
  }
  llvm::Value* op_min(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return b_.CreateSelect(fp ? b_.CreateFCmpOLT(a, b) : b_.CreateICmpSLT(a, b), a, b);
  }
  llvm::Value* op_max(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return b_.CreateSelect(fp ? b_.CreateFCmpOGT(a, b) : b_.CreateICmpSGT(a, b), a, b);
  }
  llvm::Value* op_lt(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFCmpOLT(a, b) : b_.CreateICmpSLT(a, b);
  }
  llvm::Value* op_le(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFCmpOLE(a, b) : b_.CreateICmpSLE(a, b);
  }
  llvm::Value* op_eq(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
  }
  llvm::Value* op_ne(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool fp) {
    return fp ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
  }
  llvm::Value* op_and(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool) {
    return b_.CreateAnd(a, b);
  }
  llvm::Value* op_or(const ir::Expr&, llvm::Value* a, llvm::Value* b, bool) {
    return b_.CreateOr(a, b);
  }

  // Address of buffer[index] for a scalar index, or a vector of addresses for a vector index.
  llvm::Value* address(const ir::Buffer& buffer, llvm::Value* index) {
    return b_.CreateInBoundsGEP(f32_, buffer_ptr(buffer), index);
  }

  // In SIMD mode, an access whose index has coefficient 1 in the lane variable is contiguous.
  bool contiguous(const ir::Expr& index) const {
    auto c = ir::linear_coefficient(index, lane_var_);
    return c && *c == 1;
  }

  llvm::Value* emit_load(const ir::Expr& e) {
    if (lanes_ > 0 && ir::uses_var(e->a, lane_var_)) {
      auto* vec_type = llvm::FixedVectorType::get(f32_, lanes_);
      llvm::Instruction* load = nullptr;
      if (contiguous(e->a)) {
        llvm::Value* base = emit(ir::substitute(e->a, lane_var_, ir::Expr(int64_t{0})));
        load = b_.CreateAlignedLoad(vec_type, address(e->buffer, base), llvm::Align(4));
      } else {
        load = target_.emit_gather(b_, vec_type, address(e->buffer, emit(e->a)));
      }
      annotate(load, e->buffer.get());
      return load;
    }
    return load_scalar(e->buffer, emit(e->a));
  }

  llvm::Value* load_scalar(const ir::Buffer& buffer, llvm::Value* index) {
    llvm::LoadInst* load = b_.CreateAlignedLoad(f32_, address(buffer, index), llvm::Align(4));
    annotate(load, buffer.get());
    return load;
  }

  void store_scalar(const ir::Buffer& buffer, llvm::Value* index, llvm::Value* value) {
    llvm::StoreInst* store = b_.CreateAlignedStore(value, address(buffer, index), llvm::Align(4));
    annotate(store, buffer.get());
  }

  // ---- Statements --------------------------------------------------------------------------

  // Statements: one hook per kind (ir/kinds.h).
  void emit(const ir::Stmt& s) {
    static constexpr void (CodeGen::*kHooks[])(const ir::Stmt&) =
        KILN_IR_STMT_HOOK_TABLE(CodeGen, emit_);
    if (status_.ok()) ir::call_hook(*this, kHooks, s);
  }

  void emit_seq(const ir::Stmt& s) {
    for (const ir::Stmt& c : s->seq) emit(c);
  }

  void emit_store(const ir::Stmt& s) {
    llvm::Value* value = emit(s->value);
    if (lanes_ > 0 && ir::uses_var(s->index, lane_var_)) {
      value = widen(value);
      llvm::Instruction* store = nullptr;
      if (contiguous(s->index)) {
        llvm::Value* base = emit(ir::substitute(s->index, lane_var_, ir::Expr(int64_t{0})));
        store = b_.CreateAlignedStore(value, address(s->buffer, base), llvm::Align(4));
      } else {
        store = target_.emit_scatter(b_, value, address(s->buffer, emit(s->index)));
      }
      annotate(store, s->buffer.get());
      return;
    }
    // Every lane writes the same element: the last lane's value is the serial loop's result.
    if (is_vector(value)) value = b_.CreateExtractElement(value, lanes_ - 1);
    store_scalar(s->buffer, emit(s->index), value);
  }

  void emit_if(const ir::Stmt& s) {
    llvm::Value* cond = emit(s->condition);
    if (is_vector(cond)) {
      fail("a condition depends on a vectorized variable");  // unreachable: such loops stay scalar
      return;
    }
    auto* then_block = llvm::BasicBlock::Create(ctx_, "then", st_.fn);
    auto* else_block =
        s->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else", st_.fn) : nullptr;
    auto* done = llvm::BasicBlock::Create(ctx_, "endif", st_.fn);
    b_.CreateCondBr(cond, then_block, else_block ? else_block : done);
    b_.SetInsertPoint(then_block);
    emit(s->then_case);
    b_.CreateBr(done);
    if (else_block) {
      b_.SetInsertPoint(else_block);
      emit(s->else_case);
      b_.CreateBr(done);
    }
    b_.SetInsertPoint(done);
  }

  void emit_let(const ir::Stmt& s) {
    st_.vars[s->loop_var.get()] = emit(s->value);
    emit(s->body);
    st_.vars.erase(s->loop_var.get());
  }

  void emit_allocate(const ir::Stmt& s) {
    int64_t n = s->buffer->num_elements();
    if (n * 4 > kMaxLocalBytes) {
      fail("local buffer " + s->buffer->name + " needs " + std::to_string(n * 4) +
           " bytes, over the " + std::to_string(kMaxLocalBytes) + "-byte stack limit");
      return;
    }
    // Allocas at the top of the entry block are what LLVM promotes to registers.
    llvm::IRBuilder<> entry(st_.alloca_block, st_.alloca_block->begin());
    llvm::AllocaInst* storage =
        entry.CreateAlloca(llvm::ArrayType::get(f32_, n), nullptr, s->buffer->name);
    storage->setAlignment(llvm::Align(64));
    st_.buffers[s->buffer.get()] = storage;
    emit(s->body);
    st_.buffers.erase(s->buffer.get());
  }

  void emit_for(const ir::Stmt& s) {
    if (s->extent == 0) return;
    const ir::ExprNode* v = s->loop_var.get();
    if (s->extent == 1) {
      st_.vars[v] = b_.getInt64(0);
      emit(s->body);
      st_.vars.erase(v);
      return;
    }
    switch (s->loop_kind) {
      case ir::LoopKind::kUnrolled: {
        auto reduction = lowered_->ordered_reductions.find(s.get());
        if (reduction != lowered_->ordered_reductions.end()) {
          emit_ordered_reduction(s, reduction->second);
        } else {
          fail("unrolled loop " + v->name + " was not expanded by the lowering pipeline");
        }
        return;
      }
      case ir::LoopKind::kVectorized:
        if (lanes_ == 0 && lowered_->simd_loops.count(s.get())) {
          lane_var_ = v;
          lanes_ = static_cast<int>(s->extent);
          emit(s->body);
          lane_var_ = nullptr;
          lanes_ = 0;
        } else {
          emit_serial(s, /*vectorize_hint=*/true);
        }
        return;
      case ir::LoopKind::kParallel:
        if (!st_.in_parallel && lanes_ == 0) {
          emit_parallel(s);
        } else {
          emit_serial(s, false);
        }
        return;
      case ir::LoopKind::kSerial:
        emit_serial(s, false);
        return;
    }
  }

  // One vector load of the addend's elements and an ordered llvm.vector.reduce.fadd starting
  // from the accumulator (ir/passes/ordered_reduction.h).
  void emit_ordered_reduction(const ir::Stmt& loop, const ir::passes::OrderedReduction& r) {
    const ir::Stmt& store = loop->body;
    const ir::ExprNode* v = loop->loop_var.get();
    const ir::Expr& target = r.accumulator;
    const ir::Expr& addend = r.addend;
    llvm::Value* start = emit(target);
    llvm::Value* first = emit(ir::substitute(addend->a, v, ir::Expr(int64_t{0})));
    llvm::LoadInst* elements =
        b_.CreateAlignedLoad(llvm::FixedVectorType::get(f32_, static_cast<unsigned>(loop->extent)),
                             address(addend->buffer, first), llvm::Align(4));
    annotate(elements, addend->buffer.get());
    llvm::Value* sum = b_.CreateFAddReduce(start, elements);  // ordered: no reassoc flag
    store_scalar(store->buffer, emit(store->index), sum);
  }

  void emit_serial(const ir::Stmt& s, bool vectorize_hint) {
    emit_loop(b_.getInt64(0), b_.getInt64(s->extent), vectorize_hint, [&](llvm::Value* i) {
      st_.vars[s->loop_var.get()] = i;
      emit(s->body);
    });
    st_.vars.erase(s->loop_var.get());
  }

  // for (i = begin; i < end; ++i) body(i)
  void emit_loop(llvm::Value* begin, llvm::Value* end, bool vectorize_hint,
                 const std::function<void(llvm::Value*)>& body) {
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "loop", st_.fn);
    auto* exit = llvm::BasicBlock::Create(ctx_, "loop.exit", st_.fn);
    auto* cb = llvm::dyn_cast<llvm::ConstantInt>(begin);
    auto* ce = llvm::dyn_cast<llvm::ConstantInt>(end);
    if (cb && ce && cb->getSExtValue() < ce->getSExtValue()) {
      b_.CreateBr(loop);
    } else {
      b_.CreateCondBr(b_.CreateICmpSLT(begin, end), loop, exit);
    }
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2, "i");
    i->addIncoming(begin, preheader);
    body(i);
    llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1), "", true, true);
    llvm::BranchInst* br = b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, exit);
    i->addIncoming(next, b_.GetInsertBlock());
    if (vectorize_hint) {
      llvm::Metadata* enable[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                  llvm::ConstantAsMetadata::get(b_.getTrue())};
      llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(ctx_, enable)};
      llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, ops);
      id->replaceOperandWith(0, id);
      br->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
    b_.SetInsertPoint(exit);
  }

  // Outlines the loop body into `void body(i64 begin, i64 end, ptr closure)` and hands it to the
  // runtime's parallel_for. The closure holds the buffers and variables the body uses.
  void emit_parallel(const ir::Stmt& s) {
    std::vector<const ir::ExprNode*> vars = ir::free_vars(s);
    std::vector<const ir::BufferNode*> buffers = ir::used_buffers(s);
    std::vector<llvm::Type*> fields(buffers.size(), ptr_);
    for (const ir::ExprNode* v : vars) {
      auto it = st_.vars.find(v);
      fields.push_back(it == st_.vars.end() ? i64_ : it->second->getType());  // unbound: below
    }
    fields.push_back(ptr_);  // the runtime API
    auto* closure_type = llvm::StructType::get(ctx_, fields);

    llvm::IRBuilder<> entry(st_.alloca_block, st_.alloca_block->begin());
    llvm::AllocaInst* closure = entry.CreateAlloca(closure_type, nullptr, "closure");
    std::vector<llvm::Value*> values;
    for (const ir::BufferNode* b : buffers) {
      auto it = st_.buffers.find(b);
      if (it == st_.buffers.end()) {
        fail("buffer " + b->name + " is used outside its allocation");
        return;
      }
      values.push_back(it->second);
    }
    for (const ir::ExprNode* v : vars) {
      auto it = st_.vars.find(v);
      if (it == st_.vars.end()) {
        fail("unbound variable " + v->name);
        return;
      }
      values.push_back(it->second);
    }
    values.push_back(st_.api);
    for (size_t i = 0; i < values.size(); ++i) {
      b_.CreateStore(values[i], b_.CreateStructGEP(closure_type, closure, i));
    }

    auto* body_type = llvm::FunctionType::get(b_.getVoidTy(), {i64_, i64_, ptr_}, false);
    llvm::Function* body = llvm::Function::Create(body_type, llvm::Function::InternalLinkage,
                                                  st_.fn->getName() + ".parallel", module_);
    set_attributes(body);

    FunctionState outer = std::move(st_);
    llvm::IRBuilderBase::InsertPoint outer_ip = b_.saveIP();
    st_ = FunctionState{};
    st_.fn = body;
    st_.in_parallel = true;
    st_.alloca_block = llvm::BasicBlock::Create(ctx_, "entry", body);
    b_.SetInsertPoint(st_.alloca_block);
    llvm::Value* env = body->getArg(2);
    for (size_t i = 0; i < values.size(); ++i) {
      llvm::Value* v = b_.CreateLoad(fields[i], b_.CreateStructGEP(closure_type, env, i));
      if (i < buffers.size()) {
        st_.buffers[buffers[i]] = v;
      } else if (i < buffers.size() + vars.size()) {
        st_.vars[vars[i - buffers.size()]] = v;
      } else {
        st_.api = v;
      }
    }
    emit_loop(body->getArg(0), body->getArg(1), false, [&](llvm::Value* i) {
      st_.vars[s->loop_var.get()] = i;
      emit(s->body);
    });
    b_.CreateRetVoid();
    st_ = std::move(outer);
    b_.restoreIP(outer_ip);

    // api->parallel_for(api->pool, extent, body, closure)
    auto* api_type = llvm::StructType::get(ctx_, {ptr_, ptr_});
    llvm::Value* parallel_for = b_.CreateLoad(ptr_, b_.CreateStructGEP(api_type, st_.api, 0));
    llvm::Value* pool = b_.CreateLoad(ptr_, b_.CreateStructGEP(api_type, st_.api, 1));
    auto* parallel_for_type =
        llvm::FunctionType::get(b_.getVoidTy(), {ptr_, i64_, ptr_, ptr_}, false);
    b_.CreateCall(parallel_for_type, parallel_for, {pool, b_.getInt64(s->extent), body, closure});
  }

  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  const CodegenTarget& target_;
  const ir::Program& program_;
  llvm::IRBuilder<> b_;
  llvm::Type* i64_;
  llvm::Type* f32_;
  llvm::PointerType* ptr_;
  std::unordered_map<const ir::BufferNode*, std::pair<llvm::MDNode*, llvm::MDNode*>> alias_;
  FunctionState st_;
  // Buffers the current stage loads from or stores to, in its own code or its parallel bodies
  // (which are emitted with their own FunctionState).
  std::set<const ir::BufferNode*> touched_;
  const ir::ExprNode* lane_var_ = nullptr;  // the variable of the SIMD body being emitted
  int lanes_ = 0;                           // its width; 0 outside SIMD bodies
  const LoweredStage* lowered_ = nullptr;   // the stage being emitted
  // Integer operations already emitted in int_ops_block_: (kind, a, b) -> result.
  std::map<std::tuple<int, llvm::Value*, llvm::Value*>, llvm::Value*> int_ops_;
  llvm::BasicBlock* int_ops_block_ = nullptr;
  Status status_;
};

// Target machines are costly to create (ms) and not thread-safe: one per thread and target.
Result<llvm::TargetMachine*> target_machine(const CodegenTarget& codegen) {
  initialize_llvm();
  const Target& target = codegen.target();
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> cache;
  std::string key = target.triple + "|" + target.cpu + "|" + target.features;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.get();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!t) return CompileError("target triple " + target.triple + ": " + error);
  llvm::TargetMachine* tm =
      t->createTargetMachine(target.triple, target.cpu, target.features, codegen.target_options(),
                             llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive);
  if (!tm) return CompileError("cannot create a target machine for " + target.to_string());
  cache[key].reset(tm);
  return tm;
}

struct Compiled {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
  llvm::TargetMachine* tm = nullptr;
};

Result<Compiled> generate(const ir::Program& program, const Target& target, bool optimize,
                          CompileTimings* timings) {
  const std::unique_ptr<CodegenTarget> target_hooks = new_codegen(target);
  KILN_ASSIGN_OR_RETURN(llvm::TargetMachine * tm, target_machine(*target_hooks));
  Compiled out;
  out.tm = tm;
  out.ctx = std::make_unique<llvm::LLVMContext>();
  out.module = std::make_unique<llvm::Module>(program.name, *out.ctx);
  target_hooks->configure_module(*out.module, *tm);

  auto start = std::chrono::steady_clock::now();
  CodeGen codegen(*out.ctx, *out.module, *target_hooks, program);
  for (const ir::Stage& stage : program.stages) KILN_RETURN_IF_ERROR(codegen.emit_stage(stage));
  std::string verify_errors;
  llvm::raw_string_ostream verify_stream(verify_errors);
  if (llvm::verifyModule(*out.module, &verify_stream)) {
    return InternalError("generated LLVM IR for " + program.name + " is invalid: " + verify_errors);
  }
  if (timings) timings->codegen_ms = ms_since(start);
  if (!optimize) return out;

  start = std::chrono::steady_clock::now();
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*out.module, mam);
  if (timings) timings->optimize_ms = ms_since(start);
  return out;
}

Result<std::string> emit_file(Compiled& compiled, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager pm;
  if (compiled.tm->addPassesToEmitFile(pm, stream, nullptr, type)) {
    return CompileError("the target cannot emit this file type");
  }
  pm.run(*compiled.module);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

Result<std::string> compile_program(const ir::Program& program, const Target& target,
                                    CompileTimings* timings) {
  KILN_ASSIGN_OR_RETURN(Compiled compiled, generate(program, target, true, timings));
  auto start = std::chrono::steady_clock::now();
  Result<std::string> object = emit_file(compiled, llvm::CodeGenFileType::ObjectFile);
  if (timings) timings->emit_ms = ms_since(start);
  return object;
}

Result<std::string> program_llvm_ir(const ir::Program& program, const Target& target,
                                    bool optimized) {
  KILN_ASSIGN_OR_RETURN(Compiled compiled, generate(program, target, optimized, nullptr));
  std::string text;
  llvm::raw_string_ostream stream(text);
  compiled.module->print(stream, nullptr);
  return text;
}

Result<std::string> program_assembly(const ir::Program& program, const Target& target) {
  KILN_ASSIGN_OR_RETURN(Compiled compiled, generate(program, target, true, nullptr));
  return emit_file(compiled, llvm::CodeGenFileType::AssemblyFile);
}

}  // namespace kiln::builder
