#include "ir/passes/fuse_epilogue.h"

#include "ir/mutator.h"
#include "ir/visitor.h"

namespace kiln::ir::passes {

namespace {

// Finds what makes fusion wrong: reads of the target, stores into it without coordinates.
class TargetUses : public ir::IRVisitor {
 public:
  explicit TargetUses(const ir::BufferNode* target) : target_(target) {}
  bool loaded = false, flat_store = false;

 protected:
  void visit_load(const ir::Expr& e) override {
    loaded = loaded || e->buffer.get() == target_;
    IRVisitor::visit_load(e);
  }
  void visit_store(const ir::Stmt& s) override {
    flat_store = flat_store || (s->buffer.get() == target_ && s->indices.empty());
    IRVisitor::visit_store(s);
  }

 private:
  const ir::BufferNode* target_;
};

class ApplyEpilogue : public ir::IRMutator {
 public:
  ApplyEpilogue(const ir::BufferNode* target, const Epilogue& epilogue)
      : target_(target), epilogue_(epilogue) {}

 protected:
  ir::Stmt mutate_store(const ir::Stmt& s) override {
    if (s->buffer.get() != target_) return IRMutator::mutate_store(s);
    return ir::Store(s->buffer, s->indices, epilogue_(s->value, s->indices));
  }

 private:
  const ir::BufferNode* target_;
  const Epilogue& epilogue_;
};

}  // namespace

Result<ir::Program> fuse_epilogue(const ir::Program& program, const ir::Buffer& target,
                                  const Epilogue& epilogue) {
  TargetUses uses(target.get());
  for (const ir::Stage& stage : program.stages) uses.visit(stage.body);
  if (uses.loaded) {
    return UnimplementedError(program.name + ": the kernel reads its output " + target->name +
                              " back, so an epilogue cannot be fused into its stores");
  }
  if (uses.flat_store) {
    return UnimplementedError(program.name + ": a store into " + target->name +
                              " has no per-dimension indices for the epilogue");
  }
  ir::Program out = program;
  ApplyEpilogue apply(target.get(), epilogue);
  for (ir::Stage& stage : out.stages) stage.body = apply.mutate(stage.body);
  return out;
}

}  // namespace kiln::ir::passes
