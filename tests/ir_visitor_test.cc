// IRVisitor and IRMutator: the default hooks reach every child (Store's per-dimension indices
// included), an identity mutation shares every node, a rewrite rebuilds only the path to what
// changed and keeps the rest of each statement (loop kind, extent, buffer, indices).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/analysis.h"
#include "ir/ir.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/visitor.h"

namespace kiln::ir {
namespace {

// Counts the loads of each buffer, by name.
class LoadCounter : public IRVisitor {
 public:
  std::map<std::string, int> loads;

 protected:
  void visit_load(const Expr& expr) override {
    ++loads[expr->buffer->name];
    IRVisitor::visit_load(expr);  // a load's index may itself load
  }
};

// Replaces one variable by an expression.
class ReplaceVar : public IRMutator {
 public:
  ReplaceVar(const Expr& from, Expr to) : from_(from.get()), to_(std::move(to)) {}

 protected:
  Expr mutate_var(const Expr& expr) override { return expr.get() == from_ ? to_ : expr; }

 private:
  const ExprNode* from_;
  Expr to_;
};

// Records every expression kind and statement kind it reaches, in order.
class KindRecorder : public IRVisitor {
 public:
  std::vector<ExprKind> exprs;
  std::vector<StmtKind> stmts;
  void visit(const Expr& expr) override {
    if (expr.defined()) exprs.push_back(expr->kind);
    IRVisitor::visit(expr);
  }
  void visit(const Stmt& stmt) override {
    if (stmt.defined()) stmts.push_back(stmt->kind);
    IRVisitor::visit(stmt);
  }
};

// A program body with every statement kind and most expression kinds.
struct Sample {
  Buffer in{"In", {4, 8}, BufferScope::kArgument};
  Buffer out{"Out", {4, 8}, BufferScope::kArgument};
  Buffer tmp{"T", {8}, BufferScope::kLocal};
  Expr i = var("i"), j = var("j"), n = var("n");
  Stmt body =
      For(i, 4, LoopKind::kParallel,
          Allocate(tmp,
                   Seq({For(j, 8, LoopKind::kVectorized,
                            StoreFlat(tmp, j, exp(in.load({i, j})) + pow(in.load({i, j}), f32(2)))),
                        For(j, 8, LoopKind::kSerial,
                            If(j < n,
                               Store(out, {i, j},
                                     select(!(j == 0), tmp.load_flat(j), abs(tmp.load_flat(j)))),
                               Store(out, {i, j}, f32(0))))})));
};

TEST(IrVisitor, CountsLoadsEverywhere) {
  Sample s;
  LoadCounter counter;
  counter.visit(s.body);
  EXPECT_EQ(counter.loads, (std::map<std::string, int>{{"In", 2}, {"T", 2}}));
  // A load inside another load's index is reached too.
  LoadCounter nested;
  nested.visit(s.in.load_flat(min(s.in.load_flat(s.i) / f32(1), f32(0)) + s.i));
  EXPECT_EQ(nested.loads["In"], 2);
}

TEST(IrVisitor, VisitsStoreIndicesAndEveryStatement) {
  Buffer b("B", {2, 3}, BufferScope::kArgument);
  Expr i = var("i");
  KindRecorder rec;
  rec.visit(Store(b, {i, 1}, f32(1)));
  // index (i*3 + 1), then the indices i and 1, then the value.
  EXPECT_EQ(rec.exprs, (std::vector<ExprKind>{ExprKind::kAdd, ExprKind::kMul, ExprKind::kVar,
                                              ExprKind::kIntImm, ExprKind::kIntImm, ExprKind::kVar,
                                              ExprKind::kIntImm, ExprKind::kFloatImm}));
  Sample s;
  KindRecorder all;
  all.visit(s.body);
  EXPECT_EQ(all.stmts, (std::vector<StmtKind>{StmtKind::kFor, StmtKind::kAllocate, StmtKind::kSeq,
                                              StmtKind::kFor, StmtKind::kStore, StmtKind::kFor,
                                              StmtKind::kIf, StmtKind::kStore, StmtKind::kStore}));
  // The loop variables are bindings: only their uses are visited (i, j in indices and values).
  int calls = 0;
  for (ExprKind k : all.exprs) calls += k == ExprKind::kCall;
  EXPECT_EQ(calls, 3);  // exp, pow, abs
}

TEST(IrMutator, IdentityMutationReturnsTheSameHandles) {
  Sample s;
  IRMutator identity;
  Stmt same = identity.mutate(s.body);
  EXPECT_EQ(same.get(), s.body.get());
  Expr e = select(s.i < 3, exp(s.in.load({s.i, 0})), pow(f32(2), f32(3)));
  EXPECT_TRUE(identity.mutate(e).same_as(e));
  EXPECT_FALSE(identity.mutate(Expr()).defined());
  EXPECT_FALSE(identity.mutate(Stmt()).defined());
  // A mutator that rewrites nothing it reaches also shares everything.
  Expr unused = var("unused");
  EXPECT_EQ(ReplaceVar(unused, Expr(7)).mutate(s.body).get(), s.body.get());
}

TEST(IrMutator, ReplacesAVariableAndRebuildsOnlyWhatChanged) {
  Sample s;
  Expr m = var("m");
  Stmt out = ReplaceVar(s.n, m * 2).mutate(s.body);
  ASSERT_NE(out.get(), s.body.get());
  std::string text = to_string(out);
  EXPECT_NE(text.find("(j < (m*2))"), std::string::npos) << text;
  EXPECT_EQ(text.find("n)"), std::string::npos) << text;
  // Loop kinds, extents and variables are kept; the untouched first loop is shared.
  EXPECT_EQ(out->kind, StmtKind::kFor);
  EXPECT_EQ(out->loop_kind, LoopKind::kParallel);
  EXPECT_EQ(out->extent, 4);
  EXPECT_TRUE(out->loop_var.same_as(s.i));
  const Stmt& alloc = out->body;
  ASSERT_EQ(alloc->kind, StmtKind::kAllocate);
  EXPECT_TRUE(alloc->buffer.same_as(s.tmp));
  EXPECT_EQ(alloc->body->seq[0].get(), s.body->body->body->seq[0].get());
  EXPECT_NE(alloc->body->seq[1].get(), s.body->body->body->seq[1].get());
  // Replacing a variable by a constant folds the arithmetic around it.
  Expr folded = ReplaceVar(s.i, Expr(3)).mutate(s.i * 4 + 1);
  int64_t v = 0;
  EXPECT_TRUE(is_const_int(folded, &v));
  EXPECT_EQ(v, 13);
}

TEST(IrMutator, KeepsAndRewritesStoreIndices) {
  Buffer b("B", {4, 5}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j"), k = var("k");
  Stmt store = Store(b, {i, j}, exp(b.load({i, j})));
  Stmt out = ReplaceVar(j, k + 1).mutate(store);
  ASSERT_EQ(out->kind, StmtKind::kStore);
  EXPECT_TRUE(out->buffer.same_as(b));
  ASSERT_EQ(out->indices.size(), 2u);
  EXPECT_TRUE(out->indices[0].same_as(i));  // untouched index: the same handle
  EXPECT_EQ(to_string(out->indices[1]), "(k + 1)");
  EXPECT_EQ(to_string(out->index), "((i*5) + (k + 1))");
  EXPECT_EQ(out->value->kind, ExprKind::kCall);
  EXPECT_EQ(out->value->call_op, CallOp::kExp);
  EXPECT_EQ(to_string(out->value), "exp(B[((i*5) + (k + 1))])");
  // A flat store keeps no indices and gets none.
  Stmt flat = ReplaceVar(i, j).mutate(StoreFlat(b, i, f32(1)));
  EXPECT_TRUE(flat->indices.empty());
  EXPECT_TRUE(flat->index.same_as(j));
}

TEST(IrMutator, RebuiltCallsAndSelectsKeepTheirOperatorsAndTypes) {
  Buffer b("B", {8}, BufferScope::kArgument);
  Expr i = var("i"), k = var("k");
  Expr e = select(i < 4, pow(b.load_flat(i), ceil(b.load_flat(i + 1))), floor(f32(1)));
  Expr out = ReplaceVar(i, k).mutate(e);
  EXPECT_EQ(out->kind, ExprKind::kSelect);
  EXPECT_EQ(out->dtype, DType::kFloat32);
  EXPECT_EQ(out->b->call_op, CallOp::kPow);
  EXPECT_EQ(out->b->b->call_op, CallOp::kCeil);
  EXPECT_TRUE(out->c.same_as(e->c));
  EXPECT_EQ(out->a->dtype, DType::kBool);
  EXPECT_EQ(to_string(out),
            to_string(select(k < 4, pow(b.load_flat(k), ceil(b.load_flat(k + 1))), floor(f32(1)))));
}

// ---------------------------------------------------------------------------------------------
// The analyses of ir/analysis.h, which run on the visitor and mutator.

TEST(IrAnalysisOnVisitor, MathCallsCountAsOneFlopEach) {
  Buffer a("A", {8}, BufferScope::kArgument), b("B", {8}, BufferScope::kArgument);
  Expr i = var("i");
  // sigmoid: 1 / (1 + exp(-x)): a sub, an exp, an add, a div.
  Expr x = a.load_flat(i);
  EXPECT_EQ(count_flops(For(i, 8, LoopKind::kVectorized,
                            StoreFlat(b, i, f32(1) / (f32(1) + exp(f32(0) - x))))),
            8 * 4);
  EXPECT_EQ(count_flops(StoreFlat(b, 0, pow(x, sqrt(x)))), 2);
}

TEST(IrAnalysisOnVisitor, UsesVarAndSubstituteSeeCallOperands) {
  Buffer a("A", {8}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j");
  Expr e = pow(f32(2), tanh(a.load_flat(i + 1)));
  EXPECT_TRUE(uses_var(e, i.get()));
  EXPECT_FALSE(uses_var(e, j.get()));
  EXPECT_EQ(to_string(substitute(e, i.get(), j * 2)), "pow(2f, tanh(A[((j*2) + 1)]))");
  EXPECT_TRUE(substitute(e, j.get(), i).same_as(e));
}

TEST(IrAnalysisOnVisitor, FreeVarsAndBuffersInOrderOfFirstUse) {
  Buffer in("In", {16}, BufferScope::kArgument), out("Out", {4, 4}, BufferScope::kArgument);
  Buffer w("W", {16}, BufferScope::kWorkspace);
  Expr i = var("i"), n = var("n"), m = var("m");
  // i is used (in the first store) outside the loop that binds it: bound anyway, as a loop of
  // the statement binds it. Stored buffers come before those only loaded from.
  Stmt body = Seq({StoreFlat(w, i + m, in.load_flat(n)),
                   For(i, 4, LoopKind::kSerial, Store(out, {i, n}, exp(w.load_flat(i))))});
  EXPECT_EQ(free_vars(body), (std::vector<const ExprNode*>{m.get(), n.get()}));
  EXPECT_EQ(used_buffers(body), (std::vector<const BufferNode*>{w.get(), out.get(), in.get()}));
}

TEST(IrAnalysisOnVisitor, SubstituteInAStatementRebuildsFlatIndicesFromTheirDimensions) {
  Buffer out("Out", {4, 8}, BufferScope::kArgument), flat("F", {32}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j"), jo = var("jo"), ji = var("ji");
  Stmt untouched = StoreFlat(flat, i, f32(1));
  Stmt nest = Seq({For(i, 4, LoopKind::kSerial, Store(out, {i, j}, out.load({i, j}) + f32(1))),
                   StoreFlat(flat, j * 4, f32(2)), untouched});
  Stmt sub = substitute(nest, j.get(), jo * 4 + ji);
  ASSERT_EQ(sub->kind, StmtKind::kSeq);
  const Stmt& store = sub->seq[0]->body;
  // The flat index is the buffer's flattening of the substituted indices, as Store() builds it.
  EXPECT_EQ(to_string(store->index), to_string(out.flat_index({i, jo * 4 + ji})));
  ASSERT_EQ(store->indices.size(), 2u);
  EXPECT_EQ(to_string(store->indices[1]), to_string(jo * 4 + ji));
  EXPECT_EQ(to_string(store->value), to_string(out.load({i, jo * 4 + ji}) + f32(1)));
  EXPECT_EQ(to_string(sub->seq[1]->index), to_string((jo * 4 + ji) * 4));
  EXPECT_TRUE(sub->seq[1]->indices.empty());
  EXPECT_EQ(sub->seq[2].get(), untouched.get()) << "a statement free of the variable is shared";
  EXPECT_EQ(substitute(nest, jo.get(), i).get(), nest.get());
}

TEST(IrAnalysisOnVisitor, VisitLoopsGoesOutsideInAndSkipsWhatItTakes) {
  Buffer b("B", {64}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j"), k = var("k"), l = var("l");
  Stmt store = StoreFlat(b, i + j + k + l, f32(1));
  Stmt nest = Seq({For(i, 2, LoopKind::kSerial,
                       For(j, 2, LoopKind::kUnrolled, For(k, 2, LoopKind::kSerial, store))),
                   If(i < 1, For(l, 2, LoopKind::kSerial, store))});
  std::vector<std::string> seen;
  visit_loops(nest, [&](const Stmt& loop) {
    seen.push_back(loop->loop_var->name);
    return loop->loop_kind == LoopKind::kUnrolled;  // take j whole: k is not looked at
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"i", "j", "l"}));
}

}  // namespace
}  // namespace kiln::ir
