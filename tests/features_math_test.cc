// Math calls in the touch-feature extractor: the loads in a call's operands are accesses like
// any other, and the call itself adds to no arithmetic counter (as in TVM, whose touch extractor
// counts only add/sub, mul and div/mod nodes; a call of tir.exp is none of those).
#include <gtest/gtest.h>

#include "costmodel/touch_extractor.h"
#include "ir/ir.h"

namespace kiln::costmodel {
namespace {

TEST(FeaturesMath, CallsAreTransparentToTouchFeatures) {
  ir::Buffer a("A", {8, 16}, ir::BufferScope::kArgument),
      b("B", {8, 16}, ir::BufferScope::kArgument);
  ir::Buffer out("Out", {8, 16}, ir::BufferScope::kArgument);
  ir::Expr i = ir::var("i"), j = ir::var("j");
  // Out[i, j] = pow(exp(A[i, j]) * 2, B[i, 0]) + 1: one mul and one add, two calls.
  ir::Stmt s = ir::LoopNest(
      {{i, 8}, {j, 16, ir::LoopKind::kVectorized}},
      ir::Store(out, {i, j},
                ir::pow(ir::exp(a.load({i, j})) * ir::f32(2), b.load({i, 0})) + ir::f32(1)));
  TouchFeatures f = extract_touch_features(std::vector<ir::Stmt>{s});
  ASSERT_EQ(f.itervars.size(), 2u);
  ASSERT_EQ(f.accesses.size(), 3u);
  EXPECT_EQ(f.accesses[0].name, "Out_0");
  EXPECT_EQ(f.accesses[1].name, "A_0");
  EXPECT_EQ(f.accesses[2].name, "B_0");
  const Itervar& jv = f.itervars[1];
  EXPECT_EQ(jv.add_ct, 1);
  EXPECT_EQ(jv.mul_ct, 1);
  EXPECT_EQ(jv.div_ct, 0);
  // The index of A inside exp is still analyzed: stride 1 in j; B's does not use j.
  EXPECT_EQ(f.touch(1, 1).stride, 1);
  EXPECT_EQ(f.touch(1, 2).stride, 0);
  EXPECT_EQ(f.touch(0, 1).stride, 16);
}

}  // namespace
}  // namespace kiln::costmodel
