// ir/passes/ordered_reduction.h: the unrolled accumulations of consecutive elements into one
// scalar are found, with their accumulator and addend; every near miss is not.
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/passes/ordered_reduction.h"
#include "ir/printer.h"

namespace kiln::ir::passes {
namespace {

struct Dot {
  Buffer x{"X", {4, 16}, BufferScope::kArgument};
  Buffer d{"D", {4}, BufferScope::kArgument};
  Expr i = var("i"), k = var("k");
  // for i: for k (unrolled): D[i] = D[i] + X[i*16 + k]
  Stmt reduction(Expr value, LoopKind kind = LoopKind::kUnrolled, int64_t extent = 16) const {
    return For(i, 4, LoopKind::kSerial, For(k, extent, kind, Store(d, {i}, std::move(value))));
  }
  Expr dk() const { return d.load({i}); }
  Expr xk() const { return x.load({i, k}); }
};

TEST(IrPassOrderedReduction, FindsTheAccumulationLoop) {
  Dot t;
  Stmt s = t.reduction(t.dk() + t.xk());
  OrderedReductions found = find_ordered_reductions(s);
  ASSERT_EQ(found.size(), 1u) << to_string(s);
  auto it = found.find(s->body.get());  // the k loop
  ASSERT_NE(it, found.end());
  EXPECT_EQ(to_string(it->second.accumulator), to_string(t.dk()));
  EXPECT_EQ(to_string(it->second.addend), to_string(t.xk()));
  // The sum may name the addend first.
  Stmt swapped = t.reduction(t.xk() + t.dk());
  found = find_ordered_reductions(swapped);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(to_string(found.begin()->second.addend), to_string(t.xk()));
}

TEST(IrPassOrderedReduction, IgnoresNearMisses) {
  Dot t;
  // Not unrolled, or too short or too long to be one.
  EXPECT_TRUE(find_ordered_reductions(t.reduction(t.dk() + t.xk(), LoopKind::kSerial)).empty());
  EXPECT_TRUE(
      find_ordered_reductions(t.reduction(t.dk() + t.xk(), LoopKind::kUnrolled, 1)).empty());
  Buffer wide("W", {4, 2048}, BufferScope::kArgument);
  EXPECT_TRUE(find_ordered_reductions(
                  t.reduction(t.dk() + wide.load({t.i, t.k}), LoopKind::kUnrolled, 1025))
                  .empty());
  // Not a sum into the stored element.
  EXPECT_TRUE(find_ordered_reductions(t.reduction(t.dk() * t.xk())).empty());
  Buffer other("E", {4}, BufferScope::kArgument);
  EXPECT_TRUE(find_ordered_reductions(t.reduction(other.load({t.i}) + t.xk())).empty());
  // The addend is not consecutive elements of another buffer.
  EXPECT_TRUE(
      find_ordered_reductions(t.reduction(t.dk() + t.x.load_flat(t.i * 16 + t.k * 2))).empty());
  EXPECT_TRUE(find_ordered_reductions(t.reduction(t.dk() + t.d.load_flat(t.k % 4))).empty());
  EXPECT_TRUE(find_ordered_reductions(t.reduction(t.dk() + f32(1))).empty());
  // The stored element moves with the loop variable.
  Stmt moving =
      For(t.k, 4, LoopKind::kUnrolled, Store(t.d, {t.k}, t.d.load({t.k}) + t.x.load({0, t.k})));
  EXPECT_TRUE(find_ordered_reductions(moving).empty());
}

}  // namespace
}  // namespace kiln::ir::passes
