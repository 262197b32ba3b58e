#include "builder/lower.h"

#include "exchange/target_description.h"
#include "ir/analysis.h"
#include "ir/passes/expand_unrolled.h"
#include "ir/passes/forward_stores.h"
#include "ir/passes/split_simd.h"
#include "ir/passes/unroll.h"
#include "ir/printer.h"

namespace kiln::builder {

namespace {

// Unrolling a serial loop on our own stops at this many emitted stores.
constexpr int64_t kMaxRegisterUnrollStores = 1024;

const LoweringPass kPipeline[] = {
    {"split_wide_simd",
     [](LoweredStage& s, const LoweringOptions& options) {
       if (options.simd_lanes > 0) s.body = ir::passes::split_wide_simd(s.body, options.simd_lanes);
     },
     nullptr, nullptr},
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
    {"expand_unrolled",
     [](LoweredStage& s, const LoweringOptions&) {
       ir::passes::ExpandedStmt expanded =
           ir::passes::expand_unrolled(s.body, s.ordered_reductions);
       s.body = std::move(expanded.body);
       s.ordered_reductions = std::move(expanded.ordered_reductions);
     },
     nullptr, nullptr},
    {"simd_legality",
     [](LoweredStage& s, const LoweringOptions&) {
       s.simd_loops = ir::passes::find_simd_loops(s.body);
     },
     "simd",
     [](const LoweredStage& s, const ir::StmtNode* loop) { return s.simd_loops.count(loop) > 0; }},
    {"forward_stores",
     [](LoweredStage& s, const LoweringOptions&) {
       ir::passes::ForwardedStmt forwarded =
           ir::passes::forward_stores(s.body, s.simd_loops, s.ordered_reductions);
       s.body = std::move(forwarded.body);
       s.simd_loops = std::move(forwarded.simd_loops);
       s.ordered_reductions = std::move(forwarded.ordered_reductions);
     },
     nullptr, nullptr},
};

// "  simd: loop v (extent n)" for each loop an analysis chose, in the order the IR prints them.
std::string chosen_loops(const LoweringPass& pass, const LoweredStage& stage) {
  std::string text;
  ir::visit_loops(stage.body, [&](const ir::Stmt& loop) {
    if (pass.chose(stage, loop.get())) {
      text += std::string("  ") + pass.chooses + ": loop " + loop->loop_var->name + " (extent " +
              std::to_string(loop->extent) + ")\n";
    }
    return false;
  });
  return text.empty() ? std::string("  ") + pass.chooses + ": none\n" : text;
}

}  // namespace

LoweringOptions lowering_options(const Target& target) {
  const TargetDescription description = describe(target);
  return {description.register_floats(), description.simd_lanes()};
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
