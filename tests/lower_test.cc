// builder/lower.h: the lowering pipeline runs its passes in their fixed order and takes ordered
// reductions only from the loops the schedule unrolled.
#include "builder/lower.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/ir.h"

namespace kiln::builder {
namespace {

TEST(LowerPipeline, RunsItsPassesInOrder) {
  ir::Buffer out("Out", {16}, ir::BufferScope::kArgument);
  ir::Stmt body = ir::For(ir::var("v"), 16, ir::LoopKind::kVectorized,
                          ir::Store(out, {ir::var("v")}, ir::f32(0)));
  std::vector<std::string> names;
  lower_stage(body, lowering_options(Target{}),
              [&](const LoweringPass& pass, const LoweredStage&) { names.push_back(pass.name); });
  EXPECT_EQ(names, (std::vector<std::string>{"ordered_reductions", "unroll_register_locals",
                                             "simd_legality"}));
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
  LoweredStage lowered = lower_stage(body, lowering_options(Target{}));
  const ir::Stmt& seq = lowered.body->body;
  ASSERT_EQ(seq->seq.size(), 3u);
  EXPECT_EQ(seq->seq[2]->loop_kind, ir::LoopKind::kUnrolled);  // unroll_register_locals
  EXPECT_EQ(lowered.ordered_reductions.size(), 1u);
  EXPECT_TRUE(lowered.ordered_reductions.count(seq->seq[0].get()));
  EXPECT_TRUE(seq->seq[0].get() == scheduled.get());  // left alone: the node the analysis saw
  EXPECT_EQ(lowered.simd_loops.size(), 1u);
  EXPECT_TRUE(lowered.simd_loops.count(seq->seq[1].get()));
}

}  // namespace
}  // namespace kiln::builder
