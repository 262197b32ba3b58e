// The loop-nest IR on its own: expression construction and constant folding, floor division and
// modulo of negative numbers (folded and interpreted, against hand-computed values), the printer,
// the interpreter (every loop kind, buffers, Allocate, guards, errors) and the analyses.
#include "ir/ir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/analysis.h"
#include "ir/int_arith.h"
#include "ir/interpreter.h"
#include "ir/printer.h"

namespace kiln::ir {
namespace {

int64_t const_value(const Expr& e) {
  int64_t v = 0;
  EXPECT_TRUE(is_const_int(e, &v)) << to_string(e) << " did not fold to a constant";
  return v;
}

// A program of one stage, "main", over argument buffers: `num_inputs` inputs, then outputs.
Program one_stage(std::vector<Buffer> buffers, int num_inputs, Stmt body) {
  Program p;
  p.name = "test";
  p.num_inputs = num_inputs;
  p.num_outputs = static_cast<int>(buffers.size()) - num_inputs;
  p.buffers = std::move(buffers);
  p.stages = {Stage{"main", std::move(body)}};
  return p;
}

// A program "test" over buffers (in, out, ws): an untimed stage "pack" then a timed "compute".
Program pack_then_compute(const Buffer& in, const Buffer& out, const Buffer& ws, Stmt pack,
                          Stmt compute) {
  Program p;
  p.name = "test";
  p.buffers = {in, out, ws};
  p.num_inputs = 1;
  p.num_outputs = 1;
  p.stages = {Stage{"pack", std::move(pack), /*timed=*/false},
              Stage{"compute", std::move(compute)}};
  return p;
}

// Interprets `p` on `data`, one vector per program buffer.
Status run(const Program& p, std::vector<std::vector<float>>& data) {
  std::vector<float*> ptrs;
  for (auto& d : data) ptrs.push_back(d.data());
  return interpret(p, ptrs);
}

// The value of the integer expression `int_expr` of the variable `n` at n == n_value, computed by
// the interpreter. n is bound through a loop variable so that nothing folds. The IR has no
// int-to-float conversion, so the value is read back as an index: out[0] = table[value + 64]
// where table[k] = k - 64. REQUIRES -64 <= value < 64.
int64_t interpret_int(const Expr& n, int64_t n_value, const Expr& int_expr) {
  constexpr int64_t kOffset = 64;
  Buffer table("table", {2 * kOffset}, BufferScope::kArgument);
  Buffer out("out", {1}, BufferScope::kArgument);
  Expr i = var("i");
  Expr value = substitute(int_expr, n.get(), i + n_value);
  Program p;
  p.name = "int";
  p.buffers = {table, out};
  p.num_inputs = 1;
  p.num_outputs = 1;
  p.stages = {Stage{
      "main", For(i, 1, LoopKind::kSerial, StoreFlat(out, 0, table.load_flat(value + kOffset)))}};
  std::vector<float> table_data(2 * kOffset), out_data(1, std::nanf(""));
  for (int64_t k = 0; k < 2 * kOffset; ++k) table_data[k] = static_cast<float>(k - kOffset);
  Status s = interpret(p, {table_data.data(), out_data.data()});
  EXPECT_TRUE(s.ok()) << s.message();
  return static_cast<int64_t>(out_data[0]);
}

// ---------------------------------------------------------------------------------------------
// Floor division and modulo.

struct FloorCase {
  int64_t a, b, quotient, remainder;
};
// Hand-computed: the quotient rounds toward negative infinity, the remainder takes the divisor's
// sign, and a == quotient * b + remainder.
const FloorCase kFloorCases[] = {
    {-7, 2, -4, 1},  {7, -2, -4, -1}, {-8, 2, -4, 0}, {7, 2, 3, 1},
    {-7, -2, 3, -1}, {8, -2, -4, 0},  {0, -3, 0, 0},  {-1, 5, -1, 4},
};

TEST(IrFloorArith, FunctionsRoundTowardNegativeInfinity) {
  for (const FloorCase& c : kFloorCases) {
    SCOPED_TRACE(std::to_string(c.a) + " / " + std::to_string(c.b));
    EXPECT_EQ(floor_div(c.a, c.b), c.quotient);
    EXPECT_EQ(floor_mod(c.a, c.b), c.remainder);
  }
}

TEST(IrFloorArith, ConstantFolderUsesFloorSemantics) {
  for (const FloorCase& c : kFloorCases) {
    SCOPED_TRACE(std::to_string(c.a) + " / " + std::to_string(c.b));
    EXPECT_EQ(const_value(Expr(c.a) / Expr(c.b)), c.quotient);
    EXPECT_EQ(const_value(Expr(c.a) % Expr(c.b)), c.remainder);
  }
}

TEST(IrFloorArith, InterpreterUsesFloorSemantics) {
  Expr n = var("n");
  for (const FloorCase& c : kFloorCases) {
    SCOPED_TRACE(std::to_string(c.a) + " / " + std::to_string(c.b));
    EXPECT_EQ(interpret_int(n, c.a, n / Expr(c.b)), c.quotient);
    EXPECT_EQ(interpret_int(n, c.a, n % Expr(c.b)), c.remainder);
  }
}

// The divisor as an unfolded variable too, so the interpreter sees two unknowns.
TEST(IrFloorArith, InterpreterWithVariableDivisor) {
  Expr n = var("n");
  for (const FloorCase& c : kFloorCases) {
    SCOPED_TRACE(std::to_string(c.a) + " / " + std::to_string(c.b));
    // (n - a + b) is b at n == a, but only the interpreter knows.
    Expr divisor = n - Expr(c.a) + Expr(c.b);
    EXPECT_EQ(interpret_int(n, c.a, Expr(c.a) / divisor), c.quotient);
    EXPECT_EQ(interpret_int(n, c.a, Expr(c.a) % divisor), c.remainder);
  }
}

// ---------------------------------------------------------------------------------------------
// Construction and constant folding.

TEST(IrExpr, IntegerConstantsFold) {
  EXPECT_EQ(const_value(Expr(2) + Expr(3)), 5);
  EXPECT_EQ(const_value(Expr(2) - Expr(3)), -1);
  EXPECT_EQ(const_value(Expr(6) * Expr(-7)), -42);
  EXPECT_EQ(const_value(min(Expr(4), Expr(-2))), -2);
  EXPECT_EQ(const_value(max(Expr(4), Expr(-2))), 4);
  EXPECT_EQ(const_value((Expr(2) + Expr(3)) * Expr(4) - Expr(1)), 19);
}

TEST(IrExpr, IdentitiesFoldToTheOperand) {
  Expr x = var("x");
  EXPECT_TRUE((x + 0).same_as(x));
  EXPECT_TRUE((Expr(0) + x).same_as(x));
  EXPECT_TRUE((x - 0).same_as(x));
  EXPECT_TRUE((x * 1).same_as(x));
  EXPECT_TRUE((Expr(1) * x).same_as(x));
  EXPECT_TRUE((x / 1).same_as(x));
  EXPECT_EQ(const_value(x * 0), 0);
  EXPECT_EQ(const_value(Expr(0) * x), 0);
  EXPECT_EQ(const_value(x % 1), 0);
}

TEST(IrExpr, WhatMustNotFoldStaysANode) {
  Expr x = var("x");
  Expr zero_minus = Expr(0) - x;  // 0 - x is not x
  EXPECT_EQ(zero_minus->kind, ExprKind::kSub);
  Expr div_by_zero = Expr(7) / Expr(0);  // left for the interpreter to report
  EXPECT_EQ(div_by_zero->kind, ExprKind::kDiv);
  Expr mod_by_zero = Expr(7) % Expr(0);
  EXPECT_EQ(mod_by_zero->kind, ExprKind::kMod);
  EXPECT_EQ((x / 2)->kind, ExprKind::kDiv);
  EXPECT_EQ((Expr(1) / x)->kind, ExprKind::kDiv);
}

TEST(IrExpr, FloatConstantsFoldButDivisionDoesNot) {
  Expr sum = f32(1.5) + f32(2.25);
  ASSERT_EQ(sum->kind, ExprKind::kFloatImm);
  EXPECT_EQ(sum->float_value, 3.75);
  EXPECT_EQ((f32(1.5) * f32(-2))->float_value, -3.0);
  EXPECT_EQ((f32(1.5) - f32(0.5))->float_value, 1.0);
  Expr quotient = f32(1) / f32(4);
  EXPECT_EQ(quotient->kind, ExprKind::kDiv);
  EXPECT_EQ(quotient->dtype, DType::kFloat32);
}

TEST(IrExpr, ResultTypes) {
  Expr x = var("x");
  EXPECT_EQ(x->dtype, DType::kInt64);
  EXPECT_EQ((x + 1)->dtype, DType::kInt64);
  EXPECT_EQ((x < 3)->dtype, DType::kBool);
  EXPECT_EQ((x == 3)->dtype, DType::kBool);
  EXPECT_EQ(((x < 3) && (x > 1))->dtype, DType::kBool);
  EXPECT_EQ((!(x < 3))->dtype, DType::kBool);
  EXPECT_EQ(select(x < 3, f32(1), f32(2))->dtype, DType::kFloat32);
  Buffer b("B", {4}, BufferScope::kArgument);
  EXPECT_EQ(b.load_flat(x)->dtype, DType::kFloat32);
}

TEST(IrExpr, GreaterThanIsASwappedLessThan) {
  Expr x = var("x"), y = var("y");
  Expr gt = x > y;
  EXPECT_EQ(gt->kind, ExprKind::kLT);
  EXPECT_TRUE(gt->a.same_as(y));
  EXPECT_TRUE(gt->b.same_as(x));
  Expr ge = x >= y;
  EXPECT_EQ(ge->kind, ExprKind::kLE);
  EXPECT_TRUE(ge->a.same_as(y));
}

TEST(IrExpr, VariablesAreDistinctByIdentityNotName) {
  Expr a = var("i"), b = var("i");
  EXPECT_FALSE(a.same_as(b));
  EXPECT_EQ((a - b)->kind, ExprKind::kSub);
}

TEST(IrBuffer, FlatIndexIsRowMajor) {
  Buffer b("B", {3, 4, 5}, BufferScope::kArgument);
  EXPECT_EQ(b->num_elements(), 60);
  EXPECT_EQ(const_value(b.flat_index({1, 2, 3})), 1 * 20 + 2 * 5 + 3);
  Expr i = var("i"), j = var("j");
  Buffer m("M", {3, 4}, BufferScope::kArgument);
  EXPECT_EQ(to_string(m.flat_index({i, j})), "((i*4) + j)");
  EXPECT_EQ(to_string(m.load({i, j})), "M[((i*4) + j)]");
}

TEST(IrProgram, BufferIndexFindsProgramBuffers) {
  Buffer a("A", {2}, BufferScope::kArgument), w("W", {2}, BufferScope::kWorkspace);
  Buffer other("A", {2}, BufferScope::kArgument);
  Program p;
  p.buffers = {a, w};
  EXPECT_EQ(p.buffer_index(a.get()), 0);
  EXPECT_EQ(p.buffer_index(w.get()), 1);
  EXPECT_EQ(p.buffer_index(other.get()), -1);  // same name, different buffer
}

// ---------------------------------------------------------------------------------------------
// Printer.

TEST(IrPrinter, Expressions) {
  Expr x = var("x"), y = var("y");
  Buffer b("B", {8}, BufferScope::kArgument);
  EXPECT_EQ(to_string(x * 2 + y), "((x*2) + y)");
  EXPECT_EQ(to_string(x / 2 - y % 3), "((x / 2) - (y % 3))");
  EXPECT_EQ(to_string(min(x, y)), "min(x, y)");
  EXPECT_EQ(to_string(max(x, 7)), "max(x, 7)");
  EXPECT_EQ(to_string((x < y) || !(x != 3)), "((x < y) || !((x != 3)))");
  EXPECT_EQ(to_string((x <= y) && (x == y)), "((x <= y) && (x == y))");
  EXPECT_EQ(to_string(select(x < 4, b.load_flat(x), f32(0.5))), "select((x < 4), B[x], 0.5f)");
  EXPECT_EQ(to_string(Expr(-3)), "-3");
}

TEST(IrPrinter, StatementsShowLoopKindsAndNesting) {
  Expr i = var("i"), j = var("j");
  Buffer out("C", {4, 8}, BufferScope::kArgument);
  Buffer tmp("T", {8}, BufferScope::kLocal);
  Stmt body = For(i, 4, LoopKind::kParallel,
                  Allocate(tmp, Seq({For(j, 8, LoopKind::kVectorized, StoreFlat(tmp, j, f32(0))),
                                     For(j, 8, LoopKind::kUnrolled,
                                         If(j < 4, Store(out, {i, j}, tmp.load_flat(j)),
                                            Store(out, {i, j}, f32(1)))),
                                     For(j, 2, LoopKind::kSerial, Store(out, {i, j}, f32(2)))})));
  EXPECT_EQ(to_string(body),
            "for i in 0..4 (parallel):\n"
            "  allocate T[8]\n"
            "  for j in 0..8 (vectorized):\n"
            "    T[j] = 0f\n"
            "  for j in 0..8 (unrolled):\n"
            "    if (j < 4):\n"
            "      C[((i*8) + j)] = T[j]\n"
            "    else:\n"
            "      C[((i*8) + j)] = 1f\n"
            "  for j in 0..2:\n"
            "    C[((i*8) + j)] = 2f\n");
  EXPECT_EQ(to_string(StoreFlat(tmp, 0, f32(1)), 2), "    T[0] = 1f\n");
}

TEST(IrPrinter, ProgramListsBuffersAndStages) {
  Buffer in("A", {2, 3}, BufferScope::kArgument), out("B", {6}, BufferScope::kArgument);
  Buffer ws("P", {6}, BufferScope::kWorkspace);
  Expr i = var("i");
  Program p = pack_then_compute(in, out, ws,
                                For(i, 6, LoopKind::kSerial, StoreFlat(ws, i, in.load_flat(i))),
                                For(i, 6, LoopKind::kSerial, StoreFlat(out, i, ws.load_flat(i))));
  EXPECT_EQ(to_string(p),
            "program test\n"
            "  buffer A[2, 3] argument\n"
            "  buffer B[6] argument\n"
            "  buffer P[6] workspace\n"
            "stage pack (untimed: layout transform):\n"
            "  for i in 0..6:\n"
            "    P[i] = A[i]\n"
            "stage compute (timed):\n"
            "  for i in 0..6:\n"
            "    B[i] = P[i]\n");
}

// ---------------------------------------------------------------------------------------------
// Interpreter.

TEST(IrInterpreter, FloatArithmeticComparisonsAndSelect) {
  Buffer x("X", {3}, BufferScope::kArgument), out("Out", {12}, BufferScope::kArgument);
  Expr x0 = x.load_flat(0), x1 = x.load_flat(1), x2 = x.load_flat(2);
  auto pick = [](Expr cond) { return select(cond, f32(1), f32(0)); };
  std::vector<Expr> values = {x0 + x1,        x0 - x1,        x0 * x2,          x0 / x1,
                              min(x0, x2),    max(x0, x2),    pick(x1 < x0),    pick(x0 <= x1),
                              pick(x2 == x2), pick(x0 != x0), pick(!(x0 < x1)), x0 / x2};
  std::vector<Stmt> stores;
  for (size_t k = 0; k < values.size(); ++k) {
    stores.push_back(StoreFlat(out, static_cast<int64_t>(k), values[k]));
  }
  std::vector<std::vector<float>> data = {{6, 3, -4}, std::vector<float>(12, std::nanf(""))};
  Status s = run(one_stage({x, out}, 1, Seq(stores)), data);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(data[1], (std::vector<float>{9, 3, -24, 2, -4, 6, 1, 0, 1, 0, 1, -1.5}));
}

TEST(IrInterpreter, IntegerComparisonsAndLogic) {
  // out[i] = 1 where 2 <= i < 5 and i != 3, or i == 7; 0 elsewhere.
  Buffer out("Out", {8}, BufferScope::kArgument);
  Expr i = var("i");
  Expr keep = ((i >= 2) && (i < 5) && (i != 3)) || (i == 7);
  std::vector<std::vector<float>> data = {std::vector<float>(8, std::nanf(""))};
  Status s =
      run(one_stage({out}, 0,
                    For(i, 8, LoopKind::kSerial, StoreFlat(out, i, select(keep, f32(1), f32(0))))),
          data);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(data[0], (std::vector<float>{0, 0, 1, 0, 1, 0, 0, 1}));
}

// The interpreter defines meaning, not speed: a loop's kind is a request to the code generator,
// so every kind computes the same values.
TEST(IrInterpreter, EveryLoopKindComputesTheSameResult) {
  for (LoopKind kind :
       {LoopKind::kSerial, LoopKind::kParallel, LoopKind::kVectorized, LoopKind::kUnrolled}) {
    SCOPED_TRACE(loop_kind_name(kind));
    Buffer x("X", {5}, BufferScope::kArgument), out("Out", {5}, BufferScope::kArgument);
    Expr i = var("i");
    std::vector<std::vector<float>> data = {{1, 2, 3, 4, 5}, std::vector<float>(5, std::nanf(""))};
    Status s = run(one_stage({x, out}, 1,
                             For(i, 5, kind, StoreFlat(out, i, x.load_flat(i) * f32(2) + f32(1)))),
                   data);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(data[1], (std::vector<float>{3, 5, 7, 9, 11}));
  }
}

TEST(IrInterpreter, NestedLoopsOverMultiDimensionalBuffers) {
  // C = A (2x3) times B (3x2), accumulated into C in place.
  Buffer a("A", {2, 3}, BufferScope::kArgument), b("B", {3, 2}, BufferScope::kArgument);
  Buffer c("C", {2, 2}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j"), k = var("k");
  Stmt body =
      LoopNest({{i, 2, LoopKind::kParallel}, {j, 2}},
               Seq({Store(c, {i, j}, f32(0)),
                    For(k, 3, LoopKind::kSerial,
                        Store(c, {i, j}, c.load({i, j}) + a.load({i, k}) * b.load({k, j})))}));
  std::vector<std::vector<float>> data = {
      {1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}, std::vector<float>(4, std::nanf(""))};
  Status s = run(one_stage({a, b, c}, 2, body), data);
  ASSERT_TRUE(s.ok()) << s.message();
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]
  EXPECT_EQ(data[2], (std::vector<float>{58, 64, 139, 154}));
}

TEST(IrInterpreter, ZeroExtentLoopRunsNothing) {
  Buffer out("Out", {1}, BufferScope::kArgument);
  Expr i = var("i");
  std::vector<std::vector<float>> data = {{5}};
  Status s =
      run(one_stage({out}, 0, For(i, 0, LoopKind::kSerial, StoreFlat(out, 7, f32(1)))), data);
  ASSERT_TRUE(s.ok()) << s.message();  // the out-of-bounds store never runs
  EXPECT_EQ(data[0][0], 5);
}

TEST(IrInterpreter, IfWithAndWithoutElse) {
  Buffer out("Out", {6}, BufferScope::kArgument);
  Expr i = var("i");
  // Tail guard without else: only i < 4 is written; with else: both branches write.
  Stmt body =
      For(i, 6, LoopKind::kSerial,
          Seq({If(i < 4, StoreFlat(out, i, f32(1))), If(i == 5, StoreFlat(out, i, f32(2)), Stmt()),
               If(i == 4, StoreFlat(out, i, f32(3)), StoreFlat(out, 0, out.load_flat(0)))}));
  std::vector<std::vector<float>> data = {{9, 9, 9, 9, 9, 9}};
  Status s = run(one_stage({out}, 0, body), data);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(data[0], (std::vector<float>{1, 1, 1, 1, 3, 2}));
}

TEST(IrInterpreter, AllocateGivesEachBodyFreshLocalStorage) {
  // For each row, a local accumulator: T[0] = 0; T[0] += X[r, c]; Out[r] = T[0]. A second local
  // buffer is read before any store, and is NaN: locals start undefined, not zero.
  Buffer x("X", {2, 3}, BufferScope::kArgument), out("Out", {2}, BufferScope::kArgument);
  Buffer undefined_out("U", {1}, BufferScope::kArgument);
  Buffer acc("T", {1}, BufferScope::kLocal), fresh("F", {1}, BufferScope::kLocal);
  Expr r = var("r"), c = var("c");
  Stmt body = Seq({For(r, 2, LoopKind::kSerial,
                       Allocate(acc, Seq({StoreFlat(acc, 0, f32(0)),
                                          For(c, 3, LoopKind::kSerial,
                                              StoreFlat(acc, 0, acc.load_flat(0) + x.load({r, c}))),
                                          StoreFlat(out, r, acc.load_flat(0))}))),
                   Allocate(fresh, StoreFlat(undefined_out, 0, fresh.load_flat(0)))});
  std::vector<std::vector<float>> data = {{1, 2, 3, 10, 20, 30}, {0, 0}, {0}};
  Status s = run(one_stage({x, out, undefined_out}, 1, body), data);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(data[1], (std::vector<float>{6, 60}));
  EXPECT_TRUE(std::isnan(data[2][0]));
}

TEST(IrInterpreter, StagesRunInOrderThroughTheWorkspace) {
  Buffer in("A", {4}, BufferScope::kArgument), out("B", {4}, BufferScope::kArgument);
  Buffer ws("P", {4}, BufferScope::kWorkspace);
  Expr i = var("i");
  Program p = pack_then_compute(
      in, out, ws, For(i, 4, LoopKind::kSerial, StoreFlat(ws, i, in.load_flat(Expr(3) - i))),
      For(i, 4, LoopKind::kSerial, StoreFlat(out, i, ws.load_flat(i) * f32(2))));
  std::vector<std::vector<float>> data = {
      {1, 2, 3, 4}, std::vector<float>(4, std::nanf("")), std::vector<float>(4, std::nanf(""))};
  Status s = run(p, data);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(data[1], (std::vector<float>{8, 6, 4, 2}));
  EXPECT_EQ(data[2], (std::vector<float>{4, 3, 2, 1}));
}

// Each failure is an error naming the stage and the cause, never an access outside a buffer.
TEST(IrInterpreter, ErrorsNameTheStageAndTheCause) {
  Buffer out("Out", {4}, BufferScope::kArgument), x("X", {4}, BufferScope::kArgument);
  Buffer local("L", {2}, BufferScope::kLocal);
  Expr i = var("i"), stray = var("stray");
  struct Case {
    const char* what;
    Stmt body;
    std::string message;
  };
  std::vector<Case> cases = {
      {"store past the end", For(i, 5, LoopKind::kSerial, StoreFlat(out, i, f32(1))),
       "stage main: access Out[4] is outside its 4 elements"},
      {"unbound variable", StoreFlat(out, 0, x.load_flat(Expr(0) - stray)),
       "stage main: unbound variable stray"},
      {"load below zero", For(i, 2, LoopKind::kSerial, StoreFlat(out, i, x.load_flat(i - 1))),
       "stage main: access X[-1] is outside its 4 elements"},
      {"division by zero", For(i, 2, LoopKind::kSerial, StoreFlat(out, Expr(4) / i, f32(1))),
       "stage main: integer division by zero in (4 / i)"},
      {"modulo by zero", For(i, 2, LoopKind::kSerial, StoreFlat(out, Expr(4) % i, f32(1))),
       "stage main: integer modulo by zero in (4 % i)"},
      {"loop variable used after its loop",
       Seq({For(i, 2, LoopKind::kSerial, StoreFlat(out, i, f32(1))), StoreFlat(out, i, f32(2))}),
       "stage main: unbound variable i"},
      {"local buffer outside its Allocate", StoreFlat(local, 0, f32(1)),
       "stage main: buffer L is not allocated here"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<std::vector<float>> data = {std::vector<float>(4, 0), std::vector<float>(4, 0)};
    Status s = run(one_stage({out, x}, 0, c.body), data);
    EXPECT_EQ(s.code(), StatusCode::kRuntime);
    EXPECT_EQ(s.message(), c.message);
  }
}

TEST(IrInterpreter, RejectsTheWrongNumberOfBuffers) {
  Buffer out("Out", {1}, BufferScope::kArgument);
  std::vector<std::vector<float>> none;
  Status s = run(one_stage({out}, 0, StoreFlat(out, 0, f32(1))), none);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "program test has 1 buffers, got 0");
}

// ---------------------------------------------------------------------------------------------
// Analyses.

TEST(IrAnalysis, UsesVarAndLinearCoefficient) {
  Expr i = var("i"), j = var("j");
  Buffer b("B", {64}, BufferScope::kArgument);
  EXPECT_TRUE(uses_var(i * 3 + j, i.get()));
  EXPECT_FALSE(uses_var(j * 3 + 1, i.get()));
  EXPECT_EQ(linear_coefficient(i * 3 + j * 2, i.get()), 3);
  EXPECT_EQ(linear_coefficient(i * 3 + j * 2, j.get()), 2);
  EXPECT_EQ(linear_coefficient((i * 4 + j) * 2, i.get()), 8);
  EXPECT_EQ(linear_coefficient(i - i * 2 + 5, i.get()), -1);
  EXPECT_EQ(linear_coefficient(j + 7, i.get()), 0);
  EXPECT_EQ(linear_coefficient(i / 2, i.get()), std::nullopt);
  EXPECT_EQ(linear_coefficient(i % 4, i.get()), std::nullopt);
  EXPECT_EQ(linear_coefficient(i * j, i.get()), std::nullopt);
  EXPECT_EQ(linear_coefficient(min(i, j), i.get()), std::nullopt);
  // A load's value is data: the index inside it does not make the expression linear.
  EXPECT_EQ(linear_coefficient(b.load_flat(i), i.get()), std::nullopt);
}

TEST(IrAnalysis, SubstituteReplacesAndFolds) {
  Expr i = var("i"), j = var("j");
  Buffer b("B", {64}, BufferScope::kArgument);
  EXPECT_EQ(to_string(substitute(i * 4 + j, i.get(), 2)), "(8 + j)");
  EXPECT_EQ(const_value(substitute(i * 4 + i / 3, i.get(), -7)), -28 + -3);
  EXPECT_EQ(to_string(substitute(select(i < j, b.load_flat(i), f32(0)), i.get(), j + 1)),
            "select(((j + 1) < j), B[(j + 1)], 0f)");
  EXPECT_EQ(to_string(substitute(!(i == 1), i.get(), j)), "!((j == 1))");
  Expr untouched = j * 2;
  EXPECT_TRUE(substitute(untouched, i.get(), 5).same_as(untouched));
}

TEST(IrAnalysis, CountFlopsMultipliesByTripCounts) {
  Buffer a("A", {4, 8}, BufferScope::kArgument), b("B", {8, 3}, BufferScope::kArgument);
  Buffer c("C", {4, 3}, BufferScope::kArgument), t("T", {1}, BufferScope::kLocal);
  Expr i = var("i"), j = var("j"), k = var("k");
  // A multiply-add per (i, j, k): 2 flops * 4 * 3 * 8. The index arithmetic is integer and
  // does not count; the zero-initialization has no float operation.
  Stmt matmul =
      LoopNest({{i, 4}, {j, 3}},
               Seq({Store(c, {i, j}, f32(0)),
                    For(k, 8, LoopKind::kUnrolled,
                        Store(c, {i, j}, c.load({i, j}) + a.load({i, k}) * b.load({k, j})))}));
  EXPECT_EQ(count_flops(matmul), 2 * 4 * 3 * 8);
  // Division, min and max count; an If counts its costlier branch; Allocate is transparent.
  Expr x = a.load({0, 0});
  Stmt guarded = For(i, 5, LoopKind::kSerial,
                     Allocate(t, If(i < 3, StoreFlat(t, 0, min(x, max(x / f32(2), f32(0)))),
                                    StoreFlat(t, 0, x + f32(1)))));
  EXPECT_EQ(count_flops(guarded), 5 * 3);
  EXPECT_EQ(count_flops(If(i < 3, StoreFlat(t, 0, x * x))), 1);
}

TEST(IrAnalysis, FreeVarsAndUsedBuffers) {
  Buffer in("In", {16}, BufferScope::kArgument), out("Out", {16}, BufferScope::kArgument);
  Buffer local("L", {4}, BufferScope::kLocal);
  Expr i = var("i"), n = var("n"), m = var("m");
  Stmt body = For(i, 4, LoopKind::kSerial,
                  Allocate(local, Seq({StoreFlat(local, i, in.load_flat(i + n)),
                                       If(m < 2, StoreFlat(out, i, local.load_flat(i)))})));
  std::vector<const ExprNode*> free = free_vars(body);
  EXPECT_EQ(free, (std::vector<const ExprNode*>{n.get(), m.get()}));
  std::vector<const BufferNode*> used = used_buffers(body);
  std::sort(used.begin(), used.end());
  std::vector<const BufferNode*> expected = {in.get(), out.get()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(used, expected);  // L is allocated by the statement itself
  EXPECT_TRUE(free_vars(For(i, 2, LoopKind::kSerial, StoreFlat(out, i, f32(0)))).empty());
}

TEST(IrAnalysis, VisitExprsIsPreOrder) {
  Expr x = var("x"), y = var("y");
  std::vector<ExprKind> kinds;
  visit_exprs((x + 1) * y, [&](const Expr& e) { kinds.push_back(e->kind); });
  EXPECT_EQ(kinds, (std::vector<ExprKind>{ExprKind::kMul, ExprKind::kAdd, ExprKind::kVar,
                                          ExprKind::kIntImm, ExprKind::kVar}));
}

}  // namespace
}  // namespace kiln::ir
