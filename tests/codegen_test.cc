// The LLVM code generator must compute exactly what the IR interpreter computes, whatever the
// loop kinds ask for; and reject what it cannot compile with an error, not a crash.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "builder/build.h"
#include "builder/codegen_llvm.h"
#include "ir/interpreter.h"
#include "ir/printer.h"
#include "runtime/artifact.h"
#include "runtime/thread_pool.h"
#include "tests/max_error.h"

namespace kiln {
namespace {

using namespace ir;

// Runs `program` compiled and interpreted on the same random buffers; returns the max
// absolute difference over all buffers.
double compiled_vs_interpreted(const Program& program, int threads = 1) {
  std::vector<std::vector<float>> compiled, interpreted;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const Buffer& b : program.buffers) {
    std::vector<float> v(b->num_elements());
    for (float& x : v) x = dist(rng);
    compiled.push_back(v);
    interpreted.push_back(v);
  }
  auto built = builder::build_program(program, builder::host_target());
  EXPECT_TRUE(built.ok()) << built.status().message();
  if (!built.ok()) return INFINITY;
  auto artifact = Artifact::load_from_bytes(built->shared_object, program.name);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  std::vector<float*> cptr, iptr;
  for (auto& v : compiled) cptr.push_back(v.data());
  for (auto& v : interpreted) iptr.push_back(v.data());
  ThreadPool pool(threads);
  for (const Stage& s : program.stages) {
    auto fn = (*artifact)->stage(s.name);
    EXPECT_TRUE(fn.ok());
    (*fn)(cptr.data(), pool.api());
  }
  Status st = interpret(program, iptr);
  EXPECT_TRUE(st.ok()) << st.message();
  double diff = 0;
  for (size_t i = 0; i < compiled.size(); ++i) {
    for (size_t j = 0; j < compiled[i].size(); ++j) {
      diff = testing::max_error(diff,
                                static_cast<double>(std::fabs(compiled[i][j] - interpreted[i][j])));
    }
  }
  return diff;
}

Program one_stage(std::vector<Buffer> buffers, Stmt body) {
  Program p;
  p.name = "test";
  p.buffers = std::move(buffers);
  p.num_inputs = 1;
  p.num_outputs = 1;
  p.stages = {{"main", std::move(body), true}};
  return p;
}

TEST(Codegen, VectorizedAccessPatterns) {
  Buffer a("a", {8, 16}, BufferScope::kArgument), out("out", {8, 16}, BufferScope::kArgument);
  Buffer strided("strided", {16, 8}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j");
  // contiguous + broadcast + strided gather into a contiguous store, and a scatter store.
  Stmt body =
      LoopNest({{i, 8}, {j, 16, LoopKind::kVectorized}},
               Seq({Store(out, {i, j}, a.load({i, j}) * a.load({i, 0}) + strided.load({j, i})),
                    Store(strided, {j, i}, out.load({i, j}) - f32(1))}));
  EXPECT_LT(compiled_vs_interpreted(one_stage({a, out, strided}, body)), 1e-6);
}

TEST(Codegen, OddVectorWidthsAndTails) {
  for (int64_t n : {1, 3, 7, 17, 31}) {
    Buffer a("a", {n}, BufferScope::kArgument), out("out", {n}, BufferScope::kArgument);
    Expr j = var("j");
    Stmt body = For(j, n, LoopKind::kVectorized, Store(out, {j}, max(a.load({j}), f32(0))));
    EXPECT_LT(compiled_vs_interpreted(one_stage({a, out}, body)), 1e-6) << n;
  }
}

TEST(Codegen, RegisterTileAccumulator) {
  // A small matmul with an unrolled, vectorized local accumulator, as the templates emit.
  const int64_t M = 6, N = 32, K = 9;
  Buffer a("a", {M, K}, BufferScope::kArgument), b("b", {K, N}, BufferScope::kArgument);
  Buffer c("c", {M, N}, BufferScope::kArgument), acc("acc", {M, N}, BufferScope::kLocal);
  Expr y = var("y"), x = var("x"), k = var("k");
  Stmt init = LoopNest({{y, M, LoopKind::kUnrolled}, {x, N, LoopKind::kVectorized}},
                       Store(acc, {y, x}, f32(0)));
  Stmt update = LoopNest({{k, K}, {y, M, LoopKind::kUnrolled}, {x, N, LoopKind::kVectorized}},
                         Store(acc, {y, x}, acc.load({y, x}) + a.load({y, k}) * b.load({k, x})));
  Stmt store = LoopNest({{y, M, LoopKind::kUnrolled}, {x, N, LoopKind::kVectorized}},
                        Store(c, {y, x}, acc.load({y, x})));
  Program p = one_stage({a, b, c}, Allocate(acc, Seq({init, update, store})));
  p.num_inputs = 2;
  EXPECT_LT(compiled_vs_interpreted(p), 1e-5);
}

TEST(Codegen, UnrolledSumsKeepTheirOrderAndSmallLocalTilesLeaveMemory) {
  // dense_nopack's shape: a register tile of partial sums, then a serial write-back loop whose
  // unrolled kk loop sums each row of the tile into the output.
  const int64_t Y = 4, V = 16;
  Buffer x("x", {Y, V}, BufferScope::kArgument), out("out", {Y}, BufferScope::kArgument);
  Buffer cc("cc", {Y, V}, BufferScope::kLocal);
  Expr y = var("y"), v = var("v"), yi = var("yi"), kk = var("kk");
  Stmt fill = LoopNest({{y, Y, LoopKind::kUnrolled}, {v, V, LoopKind::kVectorized}},
                       Store(cc, {y, v}, x.load({y, v}) * f32(1000)));
  Stmt write_back = For(
      yi, Y, LoopKind::kSerial,
      Seq({Store(out, {yi}, f32(0)),
           For(kk, V, LoopKind::kUnrolled, Store(out, {yi}, out.load({yi}) + cc.load({yi, kk})))}));
  Program p = one_stage({x, out}, Allocate(cc, Seq({fill, write_back})));
  // The sums are done in the interpreter's order to the last bit: no reassociation (terms of
  // magnitude up to 1000 make any other order show in the low bits).
  EXPECT_EQ(compiled_vs_interpreted(p), 0.0);

  auto raw = builder::program_llvm_ir(p, builder::host_target(), /*optimized=*/false);
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  EXPECT_NE(raw->find("llvm.vector.reduce.fadd"), std::string::npos) << *raw;
  // The write-back loop was unrolled, every access to cc has a constant index, and the tile
  // lives in registers: no stack array is left once optimized.
  auto optimized = builder::program_llvm_ir(p, builder::host_target(), /*optimized=*/true);
  ASSERT_TRUE(optimized.ok()) << optimized.status().message();
  EXPECT_EQ(optimized->find("alloca"), std::string::npos) << *optimized;
}

TEST(Codegen, StoresAtIndicesThatMayCoincideAreNeitherForwardedNorDropped) {
  // In one basic block: out[i] and out[(3i) mod 4] are the same element for i = 0 and 2 only,
  // so neither the first store's value may be forwarded to the load nor the store dropped.
  Buffer a("a", {4}, BufferScope::kArgument), out("out", {4}, BufferScope::kArgument);
  Buffer res("res", {4, 3}, BufferScope::kArgument);
  Expr i = var("i");
  Stmt body =
      For(i, 4, LoopKind::kSerial,
          Seq({Store(out, {i}, a.load({i}) + f32(1)), Store(res, {i, Expr(0)}, out.load({i})),
               Store(out, {(i * 3) % 4}, a.load({i}) + f32(2)),
               Store(res, {i, Expr(1)}, out.load({i})), Store(out, {i}, out.load({i}) + f32(4)),
               Store(res, {i, Expr(2)}, out.load({(i * 3) % 4}))}));
  Program p = one_stage({a, out, res}, body);
  EXPECT_EQ(compiled_vs_interpreted(p), 0.0);
}

TEST(Codegen, ParallelLoopsWithCapturedVariables) {
  Buffer a("a", {5, 37}, BufferScope::kArgument), out("out", {5, 37}, BufferScope::kArgument);
  Buffer tmp("tmp", {4}, BufferScope::kLocal);
  Expr o = var("o"), i = var("i"), j = var("j"), t = var("t");
  // A serial loop around a parallel loop (the body captures o), a nested parallel loop that
  // runs serially, and a local buffer inside the parallel body.
  Stmt body =
      For(o, 5, LoopKind::kSerial,
          For(i, 37, LoopKind::kParallel,
              Allocate(tmp,
                       Seq({
                           For(t, 4, LoopKind::kParallel, Store(tmp, {t}, f32(2) * a.load({o, i}))),
                           For(j, 1, LoopKind::kVectorized,
                               Store(out, {o, i + j}, tmp.load({Expr(3)}) + a.load({o, i}))),
                       }))));
  for (int threads : {1, 2, 3}) {
    EXPECT_LT(compiled_vs_interpreted(one_stage({a, out}, body), threads), 1e-6) << threads;
  }
}

TEST(Codegen, FloorDivisionConditionsAndSelect) {
  Buffer a("a", {24}, BufferScope::kArgument), out("out", {24}, BufferScope::kArgument);
  Expr i = var("i");
  Expr shifted = i - 11;  // negative for the first iterations
  Stmt body =
      For(i, 24, LoopKind::kSerial,
          If(shifted / 4 < 0,
             Store(out, {i}, select(shifted % 5 == 3, a.load({(shifted % 7 + 7) % 24}), f32(-1))),
             Store(out, {i}, min(a.load({i}), a.load({shifted / 4})))));
  EXPECT_LT(compiled_vs_interpreted(one_stage({a, out}, body)), 1e-6);
}

TEST(Codegen, UnsafeVectorizationStaysSerial) {
  // Lanes of a "vectorized" reduction would all write the same element: the serial result must
  // still come out.
  Buffer a("a", {16}, BufferScope::kArgument), out("out", {2}, BufferScope::kArgument);
  Buffer shifted("shifted", {17}, BufferScope::kArgument);
  Expr j = var("j");
  Stmt body = Seq(
      {For(j, 16, LoopKind::kVectorized, Store(out, {0}, out.load({0}) + a.load({j}))),
       For(j, 16, LoopKind::kVectorized, Store(shifted, {j + 1}, shifted.load({j}) * f32(0.5)))});
  EXPECT_LT(compiled_vs_interpreted(one_stage({a, out, shifted}, body)), 1e-5);
}

// Two local buffers of one name (each row reduction of a LayerNorm allocates an "acc"), each
// folded onto itself in halves (acc[h] += acc[h + upper]). Each buffer has its own alias scope:
// when the scope was uniqued by name, both shared one, every access declared that it did not
// alias its own buffer, and LLVM's reordering left NaN in the sums (rows of 10, 20 and 60).
TEST(Codegen, LocalBuffersOfOneNameHaveTheirOwnAliasScopes) {
  for (int64_t n : {5, 10, 20, 60}) {
    const int64_t rows = 6;
    Buffer a("a", {rows, n}, BufferScope::kArgument);
    Buffer out("out", {rows, 2}, BufferScope::kArgument);
    Expr row = var("row");
    auto folded_sum = [&](int64_t column, const std::function<Expr(const Expr&)>& value) {
      Buffer acc("acc", {n}, BufferScope::kLocal);
      Expr v = var("v");
      std::vector<Stmt> parts = {For(v, n, LoopKind::kVectorized, Store(acc, {v}, value(v)))};
      for (int64_t m = n; m > 1;) {
        const int64_t half = m / 2, upper = m - half;
        Expr h = var("h");
        parts.push_back(For(h, half, LoopKind::kVectorized,
                            Store(acc, {h}, acc.load({h}) + acc.load({h + Expr(upper)}))));
        m = upper;
      }
      parts.push_back(Store(out, {row, Expr(column)}, acc.load({Expr(int64_t{0})})));
      return Allocate(acc, Seq(std::move(parts)));
    };
    Stmt sum = folded_sum(0, [&](const Expr& c) { return a.load({row, c}); });
    Stmt squares = folded_sum(1, [&](const Expr& c) {
      return a.load({row, c}) * a.load({row, c});
    });
    Stmt body = For(row, rows, LoopKind::kParallel, Seq({sum, squares}));
    EXPECT_LT(compiled_vs_interpreted(one_stage({a, out}, body)), 1e-4) << n;
  }
}

TEST(Codegen, RejectsOversizedLocalBuffersAndUnboundVariables) {
  Buffer a("a", {4}, BufferScope::kArgument);
  Buffer huge("huge", {1 << 20}, BufferScope::kLocal);
  Expr i = var("i"), free = var("free");
  auto built = builder::build_program(
      one_stage({a}, Allocate(huge, For(i, 4, LoopKind::kSerial, Store(huge, {i}, a.load({i}))))),
      builder::host_target());
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("huge"), std::string::npos);

  built = builder::build_program(one_stage({a}, Store(a, {free}, f32(1))), builder::host_target());
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("free"), std::string::npos);
}

TEST(Codegen, TargetStrings) {
  auto t = builder::parse_target("llvm -mcpu=x86-64-v3");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->cpu, "x86-64-v3");
  EXPECT_EQ(t->simd_lanes(), 8);
  EXPECT_EQ(t->to_string(), "llvm -mcpu=x86-64-v3");
  EXPECT_FALSE(builder::parse_target("cuda").ok());
  EXPECT_FALSE(builder::parse_target("llvm -mfoo=1").ok());
  // A pinned CPU generates code for that CPU: AVX2 code has no zmm registers.
  Buffer a("a", {64}, BufferScope::kArgument);
  Expr j = var("j");
  auto asm_text = builder::program_assembly(
      one_stage({a}, For(j, 64, LoopKind::kVectorized, Store(a, {j}, a.load({j}) * f32(3)))), *t);
  ASSERT_TRUE(asm_text.ok());
  EXPECT_EQ(asm_text->find("zmm"), std::string::npos);
  EXPECT_NE(asm_text->find("ymm"), std::string::npos);
}

}  // namespace
}  // namespace kiln
