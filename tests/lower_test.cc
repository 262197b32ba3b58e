// builder/lower.h: the lowering pipeline runs its passes in their fixed order, takes ordered
// reductions only from the loops the schedule unrolled, and `kiln show --passes` prints every
// stage after each pass.
#include "builder/lower.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/analysis.h"
#include "ir/ir.h"
#include "run_kiln.h"

namespace kiln::builder {
namespace {

TEST(LowerPipeline, RunsItsPassesInOrder) {
  ir::Buffer out("Out", {16}, ir::BufferScope::kArgument);
  ir::Stmt body = ir::For(ir::var("v"), 16, ir::LoopKind::kVectorized,
                          ir::Store(out, {ir::var("v")}, ir::f32(0)));
  std::vector<std::string> names;
  lower_stage(body, lowering_options(Target{}),
              [&](const LoweringPass& pass, const LoweredStage&) { names.push_back(pass.name); });
  EXPECT_EQ(names, (std::vector<std::string>{"split_wide_simd", "ordered_reductions",
                                             "unroll_register_locals", "expand_unrolled",
                                             "simd_legality", "forward_stores"}));
}

TEST(LowerPipeline, ReductionsAreTheSchedulesUnrolledLoops) {
  ir::Buffer x("X", {8}, ir::BufferScope::kArgument);
  ir::Buffer d("D", {2}, ir::BufferScope::kArgument);
  ir::Buffer l("L", {8}, ir::BufferScope::kLocal);
  ir::Expr k = ir::var("k"), u = ir::var("u"), v = ir::var("v");
  // k: unrolled by the schedule, a reduction. v: serial over the local L, so the pipeline
  // unrolls it; it has the reduction's shape but is emitted iteration by iteration, as before.
  ir::Stmt scheduled =
      ir::For(k, 8, ir::LoopKind::kUnrolled, ir::Store(d, {0}, d.load({0}) + x.load({k})));
  ir::Stmt body = ir::Allocate(
      l, ir::Seq(
             {scheduled, ir::For(u, 8, ir::LoopKind::kVectorized, ir::Store(l, {u}, x.load({u}))),
              ir::For(v, 8, ir::LoopKind::kSerial, ir::Store(d, {1}, d.load({1}) + l.load({v})))}));
  ir::Stmt unrolled;  // the body as unroll_register_locals leaves it
  LoweredStage lowered = lower_stage(body, lowering_options(Target{}),
                                     [&](const LoweringPass& pass, const LoweredStage& stage) {
                                       if (std::string(pass.name) == "unroll_register_locals")
                                         unrolled = stage.body;
                                     });
  ASSERT_TRUE(unrolled.defined());
  const ir::Stmt& seq = unrolled->body;
  ASSERT_EQ(seq->seq.size(), 3u);
  EXPECT_EQ(seq->seq[2]->loop_kind, ir::LoopKind::kUnrolled);  // unroll_register_locals
  EXPECT_TRUE(seq->seq[0].get() == scheduled.get());  // left alone: the node the analysis saw

  // After the pipeline: the reduction is still a loop, and a reduction; the SIMD body a loop;
  // the loop unroll_register_locals unrolled is expanded into its 8 iterations.
  int reductions = 0, simd = 0, loops = 0;
  ir::visit_loops(lowered.body, [&](const ir::Stmt& loop) {
    ++loops;
    reductions += static_cast<int>(lowered.ordered_reductions.count(loop.get()));
    simd += static_cast<int>(lowered.simd_loops.count(loop.get()));
    return false;
  });
  EXPECT_EQ(loops, 2);
  EXPECT_EQ(reductions, 1);
  EXPECT_EQ(simd, 1);
  EXPECT_EQ(lowered.ordered_reductions.size(), 1u);
  EXPECT_EQ(lowered.simd_loops.size(), 1u);
}

TEST(LowerPipeline, ShowPrintsEveryStageAfterEachPass) {
  const std::string show =
      "show -w dense:M=1,N=1000,K=512 --template dense_nopack.x86 --target 'llvm -mcpu=znver4'";
  testing::CommandResult plain = testing::run_kiln(show);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("after pass"), std::string::npos);
  testing::CommandResult r = testing::run_kiln(show + " --passes");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t at = 0;
  for (const char* pass : {"split_wide_simd", "ordered_reductions", "unroll_register_locals",
                           "expand_unrolled", "simd_legality", "forward_stores"}) {
    size_t found = r.output.find(std::string(" after pass ") + pass + ":\n", at);
    ASSERT_NE(found, std::string::npos) << pass << " in\n" << r.output;
    at = found;
  }
  EXPECT_NE(r.output.find("  ordered reduction: loop "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  simd: "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kiln::builder
