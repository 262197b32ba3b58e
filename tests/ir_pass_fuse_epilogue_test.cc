// ir/passes/fuse_epilogue.h: the epilogue is applied to every store into the target, with the
// store's coordinates, and to nothing else; fusion that would be wrong is refused, naming the
// kernel and the buffer.
#include <gtest/gtest.h>

#include <vector>

#include "ir/interpreter.h"
#include "ir/ir.h"
#include "ir/passes/fuse_epilogue.h"

namespace kiln::ir::passes {
namespace {

struct Kernel {
  Buffer in{"In", {2, 3}, BufferScope::kArgument};
  Buffer bias{"Bias", {3}, BufferScope::kArgument};
  Buffer out{"Out", {2, 3}, BufferScope::kArgument};
  Buffer tmp{"Tmp", {2, 3}, BufferScope::kWorkspace};
  Expr i = var("i"), j = var("j");
  Program program(Stmt body) const {
    Program p;
    p.name = "k";
    p.buffers = {in, bias, out, tmp};
    p.num_inputs = 2;
    p.num_outputs = 1;
    p.stages = {{"main", std::move(body), true}};
    return p;
  }
  // Tmp = In * 2, then Out = Tmp.
  Program doubled() const {
    return program(Seq({LoopNest({{i, 2}, {j, 3}}, Store(tmp, {i, j}, in.load({i, j}) * f32(2))),
                        LoopNest({{i, 2}, {j, 3}}, Store(out, {i, j}, tmp.load({i, j})))}));
  }
};

TEST(IrPassFuseEpilogue, AppliesTheEpilogueToTheTargetsStores) {
  Kernel k;
  // + Bias[channel], the channel read from the store's own coordinates.
  Epilogue add_bias = [&](const Expr& v, const std::vector<Expr>& idx) {
    return v + k.bias.load({idx[1]});
  };
  Result<Program> fused = fuse_epilogue(k.doubled(), k.out, add_bias);
  ASSERT_TRUE(fused.ok()) << fused.status().message();
  std::vector<float> in = {1, 2, 3, 4, 5, 6}, bias = {10, 20, 30}, out(6), tmp(6);
  ASSERT_TRUE(interpret(*fused, {in.data(), bias.data(), out.data(), tmp.data()}).ok());
  EXPECT_EQ(out, (std::vector<float>{12, 24, 36, 18, 30, 42}));
  EXPECT_EQ(tmp, (std::vector<float>{2, 4, 6, 8, 10, 12}));  // not the target: unchanged
}

TEST(IrPassFuseEpilogue, RefusesWhatWouldBeWrong) {
  Kernel k;
  Epilogue relu = [](const Expr& v, const std::vector<Expr>&) { return max(v, f32(0)); };
  // The kernel accumulates in its output: the epilogue would apply at every step.
  Program accumulates =
      k.program(LoopNest({{k.i, 2}, {k.j, 3}},
                         Store(k.out, {k.i, k.j}, k.out.load({k.i, k.j}) + k.in.load({k.i, k.j}))));
  Result<Program> r = fuse_epilogue(accumulates, k.out, relu);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("k: the kernel reads its output Out back"), std::string::npos)
      << r.status().message();
  // A flat store has no coordinates for the epilogue.
  Program flat = k.program(For(k.i, 6, LoopKind::kSerial, StoreFlat(k.out, k.i, f32(1))));
  r = fuse_epilogue(flat, k.out, relu);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a store into Out has no per-dimension indices"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace kiln::ir::passes
