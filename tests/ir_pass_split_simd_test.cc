// ir/passes/split_simd.h: a SIMD body wider than a target vector whose width is not a power of
// two becomes bodies of whole vectors and a tail, each lane computing what it did (interpreter);
// powers of two, bodies within one vector and loops that are not SIMD bodies stay as they are.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "ir/interpreter.h"
#include "ir/ir.h"
#include "ir/passes/simd_legality.h"
#include "ir/passes/split_simd.h"
#include "ir/printer.h"

namespace kiln::ir::passes {
namespace {

// C[v] = A[v] * 2 + B[v] over `extent` lanes, inside a serial loop over two rows.
Stmt row_loop(const Buffer& a, const Buffer& b, const Buffer& c, int64_t extent,
              LoopKind kind = LoopKind::kVectorized) {
  Expr r = var("r"), v = var("v");
  Expr at = r * Expr(extent) + v;
  return For(r, 2, LoopKind::kSerial,
             For(v, extent, kind, StoreFlat(c, at, a.load_flat(at) * f32(2) + b.load_flat(at))));
}

std::vector<float> run(int64_t extent) {
  Buffer a("A", {2 * extent}, BufferScope::kArgument), b("B", {2 * extent}, BufferScope::kArgument),
      c("C", {2 * extent}, BufferScope::kArgument);
  std::vector<float> da(2 * extent), db(2 * extent), dc(2 * extent, -1.0f);
  for (int64_t i = 0; i < 2 * extent; ++i) {
    da[i] = static_cast<float>(i);
    db[i] = static_cast<float>(3 * i % 7);
  }
  Program p;
  p.name = "rows";
  p.buffers = {a, b, c};
  p.num_inputs = 2;
  p.num_outputs = 1;
  p.stages = {{"rows", split_wide_simd(row_loop(a, b, c, extent), 16), true}};
  std::vector<float*> ptrs = {da.data(), db.data(), dc.data()};
  Status s = interpret(p, ptrs);
  EXPECT_TRUE(s.ok()) << s.message();
  return dc;
}

TEST(IrPassSplitSimd, AWideNonPowerOfTwoBodyBecomesWholeVectorsAndATail) {
  Buffer a("A", {96}, BufferScope::kArgument), b("B", {96}, BufferScope::kArgument),
      c("C", {96}, BufferScope::kArgument);
  for (auto [extent, widths] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
           {48, {16, 16, 16}}, {40, {16, 16, 8}}, {24, {16, 8}}, {17, {16, 1}}}) {
    Stmt split = split_wide_simd(row_loop(a, b, c, extent), 16);
    const Stmt& seq = split->body;  // under the serial row loop
    ASSERT_EQ(seq->kind, StmtKind::kSeq) << extent << ":\n" << to_string(split);
    std::vector<int64_t> got;
    for (const Stmt& chunk : seq->seq) {
      EXPECT_EQ(chunk->loop_kind, LoopKind::kVectorized);
      got.push_back(chunk->extent);
    }
    EXPECT_EQ(got, widths) << extent;
    // Each whole-vector chunk is itself a SIMD body.
    EXPECT_TRUE(simd_safe(seq->seq[0])) << to_string(split);
  }
}

TEST(IrPassSplitSimd, EveryLaneComputesWhatItDid) {
  for (int64_t extent : {48, 40, 24, 17}) {
    std::vector<float> got = run(extent);
    for (int64_t i = 0; i < 2 * extent; ++i) {
      EXPECT_EQ(got[i], static_cast<float>(i) * 2 + static_cast<float>(3 * i % 7))
          << extent << " lane " << i;
    }
  }
}

TEST(IrPassSplitSimd, PowersOfTwoNarrowBodiesAndOtherLoopsStay) {
  Buffer a("A", {128}, BufferScope::kArgument), b("B", {128}, BufferScope::kArgument),
      c("C", {128}, BufferScope::kArgument);
  for (int64_t extent : {64, 32, 16, 12, 8}) {
    Stmt s = row_loop(a, b, c, extent);
    EXPECT_EQ(split_wide_simd(s, 16).get(), s.get()) << extent;
  }
  Stmt serial = row_loop(a, b, c, 48, LoopKind::kSerial);
  EXPECT_EQ(split_wide_simd(serial, 16).get(), serial.get());
  // A vectorized loop whose lanes interfere is no SIMD body: left whole.
  Expr v = var("v");
  Stmt reduction = For(v, 48, LoopKind::kVectorized, Store(c, {0}, c.load({0}) + a.load({v})));
  EXPECT_EQ(split_wide_simd(reduction, 16).get(), reduction.get());
  // On 8 lanes (AVX2) 24 is three vectors.
  Stmt avx2 = split_wide_simd(row_loop(a, b, c, 24), 8);
  EXPECT_EQ(avx2->body->seq.size(), 3u) << to_string(avx2);
}

}  // namespace
}  // namespace kiln::ir::passes
