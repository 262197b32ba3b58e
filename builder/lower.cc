#include "builder/lower.h"

#include "builder/codegen_target.h"
#include "ir/passes/unroll.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace kiln::builder {

namespace {

// Unrolling a serial loop on our own stops at this many emitted stores.
constexpr int64_t kMaxRegisterUnrollStores = 1024;

const LoweringPass kPipeline[] = {
    {"ordered_reductions",
     [](LoweredStage& s, const LoweringOptions&) {
       s.ordered_reductions = ir::passes::find_ordered_reductions(s.body);
     },
     "ordered reduction",
     [](const LoweredStage& s, const ir::StmtNode* loop) {
       return s.ordered_reductions.count(loop) > 0;
     }},
    {"unroll_register_locals",
     [](LoweredStage& s, const LoweringOptions& options) {
       s.body = ir::passes::unroll_register_locals(s.body, options.register_floats,
                                                   kMaxRegisterUnrollStores);
     },
     nullptr, nullptr},
    {"simd_legality",
     [](LoweredStage& s, const LoweringOptions&) {
       s.simd_loops = ir::passes::find_simd_loops(s.body);
     },
     "simd",
     [](const LoweredStage& s, const ir::StmtNode* loop) { return s.simd_loops.count(loop) > 0; }},
};

// "  simd: loop v (extent n)" for each loop an analysis chose, in the order the IR prints them.
class ChosenLoops : public ir::IRVisitor {
 public:
  ChosenLoops(const LoweringPass& pass, const LoweredStage& stage) : pass_(pass), stage_(stage) {}
  std::string text;

  using IRVisitor::visit;
  void visit(const ir::Expr&) override {}  // expressions hold no loops

 protected:
  void visit_for(const ir::Stmt& s) override {
    if (pass_.chose(stage_, s.get())) {
      text += std::string("  ") + pass_.chooses + ": loop " + s->loop_var->name + " (extent " +
              std::to_string(s->extent) + ")\n";
    }
    IRVisitor::visit_for(s);
  }

 private:
  const LoweringPass& pass_;
  const LoweredStage& stage_;
};

std::string chosen_loops(const LoweringPass& pass, const LoweredStage& stage) {
  ChosenLoops chosen(pass, stage);
  chosen.visit(stage.body);
  return chosen.text.empty() ? std::string("  ") + pass.chooses + ": none\n" : chosen.text;
}

}  // namespace

LoweringOptions lowering_options(const Target& target) {
  return {new_codegen(target)->register_floats()};
}

LoweredStage lower_stage(const ir::Stmt& body, const LoweringOptions& options,
                         const PassObserver& observer) {
  LoweredStage stage;
  stage.body = body;
  for (const LoweringPass& pass : kPipeline) {
    pass.run(stage, options);
    if (observer) observer(pass, stage);
  }
  return stage;
}

std::string lowering_trace(const ir::Program& program, const Target& target) {
  const LoweringOptions options = lowering_options(target);
  std::string out;
  for (const ir::Stage& stage : program.stages) {
    lower_stage(stage.body, options, [&](const LoweringPass& pass, const LoweredStage& lowered) {
      out += "stage " + stage.name + " after pass " + pass.name + ":\n";
      out += ir::to_string(lowered.body, 1);
      if (pass.chooses) out += chosen_loops(pass, lowered);
    });
  }
  return out;
}

}  // namespace kiln::builder
