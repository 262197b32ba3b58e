// ir/passes/simd_legality.h: the vectorized loops whose straight-line body gives the serial
// loop's result as one SIMD body are found; loops where lanes could interfere are not.
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/passes/simd_legality.h"
#include "ir/printer.h"

namespace kiln::ir::passes {
namespace {

struct Vec {
  Buffer a{"A", {64}, BufferScope::kArgument};
  Buffer b{"B", {64}, BufferScope::kArgument};
  Buffer c{"C", {128}, BufferScope::kArgument};
  Expr v = var("v");
  Stmt loop(Stmt body, int64_t extent = 16) const {
    return For(v, extent, LoopKind::kVectorized, std::move(body));
  }
};

TEST(IrPassSimdLegality, FindsStraightLineLanes) {
  Vec t;
  Stmt s = t.loop(Seq({Store(t.b, {t.v}, t.a.load({t.v}) * f32(2)),
                       Store(t.c, {t.v * 2}, t.c.load({t.v * 2}) + t.b.load({t.v}))}));
  SimdLoops found = find_simd_loops(s);
  EXPECT_EQ(found.size(), 1u);
  EXPECT_TRUE(found.count(s.get())) << to_string(s);
  // Found under other loops too, and only vectorized loops are.
  Stmt nest = For(var("o"), 4, LoopKind::kSerial, s);
  EXPECT_TRUE(find_simd_loops(nest).count(s.get()));
  Stmt serial = For(t.v, 16, LoopKind::kSerial, Store(t.b, {t.v}, f32(0)));
  EXPECT_TRUE(find_simd_loops(serial).empty());
}

TEST(IrPassSimdLegality, RefusesLoopsWhoseLanesCouldInterfere) {
  Vec t;
  // Every lane writes one element; lanes read an element another lane writes; two stores to one
  // buffer at different indices; a guard or a loop in the body; too wide; a single lane.
  EXPECT_TRUE(find_simd_loops(t.loop(Store(t.b, {0}, t.a.load({t.v})))).empty());
  EXPECT_TRUE(find_simd_loops(t.loop(Store(t.b, {t.v}, t.b.load({t.v + 1})))).empty());
  EXPECT_TRUE(
      find_simd_loops(t.loop(Seq({Store(t.b, {t.v}, f32(0)), Store(t.b, {t.v + 16}, f32(1))})))
          .empty());
  EXPECT_TRUE(find_simd_loops(t.loop(If(t.v < 8, Store(t.b, {t.v}, f32(0))))).empty());
  EXPECT_TRUE(
      find_simd_loops(t.loop(For(var("w"), 2, LoopKind::kSerial, Store(t.b, {t.v}, f32(0)))))
          .empty());
  EXPECT_TRUE(find_simd_loops(t.loop(Store(t.b, {t.v}, f32(0)), 65)).empty());
  EXPECT_TRUE(find_simd_loops(t.loop(Store(t.b, {t.v}, f32(0)), 1)).empty());
}

TEST(IrPassSimdLegality, LooksInsideARefusedLoop) {
  Vec t;
  Expr w = var("w");
  Stmt inner = For(w, 8, LoopKind::kVectorized, Store(t.b, {t.v * 8 + w}, f32(0)));
  Stmt outer = For(t.v, 8, LoopKind::kVectorized, inner);  // not straight-line
  SimdLoops found = find_simd_loops(outer);
  EXPECT_EQ(found.size(), 1u);
  EXPECT_TRUE(found.count(inner.get()));
}

}  // namespace
}  // namespace kiln::ir::passes
