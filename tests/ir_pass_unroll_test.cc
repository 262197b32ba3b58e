// ir/passes/unroll.h: unrolled_work's two views of a nest, and unroll_register_locals, which
// unrolls exactly the serial loops that index a register-sized local buffer and compute the same.
#include <gtest/gtest.h>

#include <vector>

#include "ir/interpreter.h"
#include "ir/ir.h"
#include "ir/passes/unroll.h"
#include "ir/printer.h"

namespace kiln::ir::passes {
namespace {

TEST(IrPassUnroll, UnrolledWorkCountsEachView) {
  Buffer out("Out", {4, 32}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j");
  Stmt nest = LoopNest({{i, 4, LoopKind::kUnrolled}, {j, 32, LoopKind::kVectorized}},
                       Store(out, {i, j}, f32(1)));
  // As scheduled: 4 iterations of two 16-lane vectors; fully expanded: every element.
  EXPECT_EQ(unrolled_work(nest, UnrollView::kAsScheduled, 16), 8);
  EXPECT_EQ(unrolled_work(nest, UnrollView::kFullyExpanded, 16), 128);
  // A serial loop stays a loop as scheduled.
  Stmt serial = For(var("s"), 10, LoopKind::kSerial, nest);
  EXPECT_EQ(unrolled_work(serial, UnrollView::kAsScheduled, 16), 8);
  EXPECT_EQ(unrolled_work(serial, UnrollView::kFullyExpanded, 16), 1280);
  // An unrolled loop over one store (a possible ordered reduction) counts one when expanded.
  Stmt one = For(var("k"), 64, LoopKind::kUnrolled, Store(out, {0, 0}, f32(2)));
  EXPECT_EQ(unrolled_work(one, UnrollView::kFullyExpanded, 16), 1);
  EXPECT_EQ(unrolled_work(one, UnrollView::kAsScheduled, 16), 64);
  // A guard is over any limit when expanded, and its branches add as scheduled.
  Stmt guarded = If(i < 2, Store(out, {0, 0}, f32(1)), Store(out, {0, 1}, f32(1)));
  EXPECT_EQ(unrolled_work(guarded, UnrollView::kFullyExpanded, 16), kUnrolledGuardWork);
  EXPECT_EQ(unrolled_work(guarded, UnrollView::kAsScheduled, 16), 2);
}

// acc[16] is accumulated over k and written back to Out: the loops over acc's index are serial.
struct Accumulation {
  Buffer in{"In", {8, 16}, BufferScope::kArgument};
  Buffer out{"Out", {16}, BufferScope::kArgument};
  Buffer acc{"acc", {16}, BufferScope::kLocal};
  Expr i = var("i"), k = var("k"), i2 = var("i2"), i3 = var("i3");
  Stmt body = Allocate(
      acc,
      Seq({For(i, 16, LoopKind::kSerial, Store(acc, {i}, f32(0))),
           For(k, 8, LoopKind::kSerial,
               For(i2, 16, LoopKind::kSerial, Store(acc, {i2}, acc.load({i2}) + in.load({k, i2})))),
           For(i3, 16, LoopKind::kSerial, Store(out, {i3}, acc.load({i3})))}));
};

// The loop kinds of the loops under `s`, outermost first, in program order.
std::vector<LoopKind> loop_kinds(const Stmt& s) {
  std::vector<LoopKind> kinds;
  if (!s.defined()) return kinds;
  if (s->kind == StmtKind::kFor) kinds.push_back(s->loop_kind);
  for (const Stmt* c : {&s->body, &s->then_case, &s->else_case}) {
    for (LoopKind k : loop_kinds(*c)) kinds.push_back(k);
  }
  for (const Stmt& c : s->seq) {
    for (LoopKind k : loop_kinds(c)) kinds.push_back(k);
  }
  return kinds;
}

TEST(IrPassUnroll, UnrollsSerialLoopsOverRegisterLocals) {
  Accumulation a;
  Stmt lowered = unroll_register_locals(a.body, 512, 1024);
  // i, i2 and i3 index acc: unrolled. k does not (and would expand to 128 stores): serial.
  EXPECT_EQ(loop_kinds(lowered), (std::vector<LoopKind>{LoopKind::kUnrolled, LoopKind::kSerial,
                                                        LoopKind::kUnrolled, LoopKind::kUnrolled}))
      << to_string(lowered);

  // Loop kinds only request code shapes: the same result.
  Program p;
  p.name = "p";
  p.buffers = {a.in, a.out};
  p.num_inputs = p.num_outputs = 1;
  std::vector<float> x(128), want(16), got(16);
  for (size_t n = 0; n < x.size(); ++n) x[n] = static_cast<float>(n % 7) - 3.0f;
  p.stages = {{"main", a.body, true}};
  ASSERT_TRUE(interpret(p, {x.data(), want.data()}).ok());
  p.stages = {{"main", lowered, true}};
  ASSERT_TRUE(interpret(p, {x.data(), got.data()}).ok());
  EXPECT_EQ(got, want);
}

TEST(IrPassUnroll, LeavesLoopsItMustNotUnroll) {
  Accumulation a;
  // acc (16 floats) is over a 15-float register file: nothing changes, nothing is rebuilt.
  EXPECT_EQ(unroll_register_locals(a.body, 15, 1024).get(), a.body.get());
  // Each loop over acc expands to 16 stores, over a limit of 15.
  EXPECT_EQ(unroll_register_locals(a.body, 512, 15).get(), a.body.get());
  // A guarded body is never unrolled, nor is a loop over an argument buffer.
  Stmt guarded =
      Allocate(a.acc, For(a.i, 16, LoopKind::kSerial, If(a.i < 8, Store(a.acc, {a.i}, f32(0)))));
  EXPECT_EQ(unroll_register_locals(guarded, 512, 1024).get(), guarded.get());
  Stmt argument = For(a.i, 16, LoopKind::kSerial, Store(a.out, {a.i}, f32(0)));
  EXPECT_EQ(unroll_register_locals(argument, 512, 1024).get(), argument.get());
  // A loop of extent 1 is left alone (the emitter binds its variable to 0 whatever its kind).
  Stmt single = Allocate(a.acc, For(a.i, 1, LoopKind::kSerial, Store(a.acc, {a.i}, f32(0))));
  EXPECT_EQ(unroll_register_locals(single, 512, 1024).get(), single.get());
}

TEST(IrPassUnroll, DecidesOuterLoopsOnTheScheduledKinds) {
  // o (4) over i (16), both indexing acc[64]: expanded, o is 64 stores. Had i been unrolled
  // first, o would count 4 (an unrolled loop over one store counts one): loops are decided
  // outermost first, on the kinds the schedule gave them, as the emitter decided them.
  Buffer acc("acc", {64}, BufferScope::kLocal);
  Expr o = var("o"), i = var("i");
  Stmt nest = Allocate(acc, For(o, 4, LoopKind::kSerial,
                                For(i, 16, LoopKind::kSerial, Store(acc, {o * 16 + i}, f32(1)))));
  EXPECT_EQ(loop_kinds(unroll_register_locals(nest, 512, 63)),
            (std::vector<LoopKind>{LoopKind::kSerial, LoopKind::kUnrolled}));
  EXPECT_EQ(loop_kinds(unroll_register_locals(nest, 512, 64)),
            (std::vector<LoopKind>{LoopKind::kUnrolled, LoopKind::kUnrolled}));
}

}  // namespace
}  // namespace kiln::ir::passes
