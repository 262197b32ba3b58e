// limit_unrolling's reshaping keeps a Store's per-dimension indices, rewritten in terms of the
// new loop variables (passes after it, such as epilogue fusion, read coordinates from them).
#include "ops/schedule_util.h"

#include <gtest/gtest.h>

#include <vector>

#include "ir/interpreter.h"
#include "ir/ir.h"
#include "ir/printer.h"

namespace kiln::ops {
namespace {

TEST(ScheduleUtil, LimitUnrollingKeepsStoreIndices) {
  ir::Buffer in("In", {4, 64}, ir::BufferScope::kArgument);
  ir::Buffer out("Out", {4, 64}, ir::BufferScope::kArgument);
  ir::Expr r = ir::var("r"), c = ir::var("c");
  ir::Stmt nest = ir::LoopNest({{r, 4}, {c, 64, ir::LoopKind::kUnrolled}},
                               ir::Store(out, {r, c}, ir::exp(in.load({r, c})) + ir::f32(1)));
  ir::Stmt limited = limit_unrolling(nest, 8, 8, TargetInfo{16});
  // r stays; c is split into a serial c.o and an unrolled c.i.
  ASSERT_EQ(limited->kind, ir::StmtKind::kFor);
  const ir::Stmt& outer = limited->body;
  ASSERT_EQ(outer->kind, ir::StmtKind::kFor);
  EXPECT_EQ(outer->loop_kind, ir::LoopKind::kSerial);
  const ir::Stmt& inner = outer->body;
  ASSERT_EQ(inner->kind, ir::StmtKind::kFor);
  EXPECT_EQ(inner->loop_kind, ir::LoopKind::kUnrolled);
  const ir::Stmt& store = inner->body;
  ASSERT_EQ(store->kind, ir::StmtKind::kStore);
  ASSERT_EQ(store->indices.size(), 2u);
  EXPECT_TRUE(store->indices[0].same_as(r));
  EXPECT_EQ(ir::to_string(store->indices[1]),
            "((c.o*" + std::to_string(inner->extent) + ") + c.i)");

  // And it computes the same as before.
  ir::Program p;
  p.name = "p";
  p.buffers = {in, out};
  p.num_inputs = p.num_outputs = 1;
  std::vector<float> x(256), want(256), got(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) / 64.0f - 2.0f;
  p.stages = {{"main", nest, true}};
  ASSERT_TRUE(ir::interpret(p, {x.data(), want.data()}).ok());
  p.stages = {{"main", limited, true}};
  ASSERT_TRUE(ir::interpret(p, {x.data(), got.data()}).ok());
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace kiln::ops
