// ir/passes/expand_unrolled.h and ir/passes/forward_stores.h: unrolled loops become their
// iterations; within one basic block a stored value is forwarded to the loads of its element
// (named by a Let), a store overwritten before any read of its buffer is dropped; nothing is
// forwarded across a loop, a guard or out of an allocation's scope; and the whole lowering
// pipeline leaves every template's programs computing exactly what they computed.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "builder/lower.h"
#include "ir/analysis.h"
#include "ir/interpreter.h"
#include "ir/ir.h"
#include "ir/passes/expand_unrolled.h"
#include "ir/passes/forward_stores.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "ops/registry.h"

namespace kiln::ir::passes {
namespace {

// Loads and stores of each buffer, by name, and the Lets of a statement.
struct Census : IRVisitor {
  std::map<std::string, int> loads, stores;
  int lets = 0;
  using IRVisitor::visit;

 protected:
  void visit_load(const Expr& e) override {
    ++loads[e->buffer->name];
    IRVisitor::visit_load(e);
  }
  void visit_store(const Stmt& s) override {
    ++stores[s->buffer->name];
    IRVisitor::visit_store(s);
  }
  void visit_let(const Stmt& s) override {
    ++lets;
    IRVisitor::visit_let(s);
  }
};

Census census(const Stmt& s) {
  Census c;
  c.visit(s);
  return c;
}

Stmt forwarded(const Stmt& s) { return forward_stores(s, {}, {}).body; }

// Every buffer of `p` after the interpreter ran it, its inputs filled from a fixed seed and its
// other buffers zero at the start; empty (and a test failure) if the interpreter fails.
std::vector<float> run(const Program& p) {
  std::mt19937 rng(5);
  std::vector<std::vector<float>> data;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    data.emplace_back(p.buffers[i]->num_elements(), 0.0f);
    if (static_cast<int>(i) < p.num_inputs) {
      for (float& x : data.back()) x = std::uniform_real_distribution<float>(-1, 1)(rng);
    }
  }
  std::vector<float*> ptrs;
  for (auto& d : data) ptrs.push_back(d.data());
  Status s = interpret(p, ptrs);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<float> all;
  if (!s.ok()) return all;
  for (auto& d : data) all.insert(all.end(), d.begin(), d.end());
  return all;
}

bool bit_identical(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// Runs `a` and `b` as the one stage of a program over `buffers` (the first `inputs` of them its
// inputs) and expects every buffer to end bit-identical.
void ExpectSameResults(const std::vector<Buffer>& buffers, int inputs, const Stmt& a,
                       const Stmt& b) {
  Program p;
  p.name = "p";
  p.buffers = buffers;
  p.num_inputs = inputs;
  p.num_outputs = static_cast<int>(buffers.size()) - inputs;
  p.stages = {{"s", a, true}};
  std::vector<float> before = run(p);
  p.stages[0].body = b;
  EXPECT_TRUE(bit_identical(before, run(p))) << to_string(b);
}

TEST(IrPassExpandUnrolled, UnrolledLoopsBecomeTheirIterations) {
  Buffer out("Out", {4, 8}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j"), s = var("s");
  Stmt nest = For(s, 3, LoopKind::kSerial,
                  LoopNest({{i, 4, LoopKind::kUnrolled}, {j, 1, LoopKind::kVectorized}},
                           Store(out, {i, j + s}, f32(1))));
  ExpandedStmt e = expand_unrolled(nest, {});
  // The serial loop stays; under it, four stores with constant rows, in one flat sequence.
  ASSERT_EQ(e.body->kind, StmtKind::kFor);
  const Stmt& body = e.body->body;
  ASSERT_EQ(body->kind, StmtKind::kSeq);
  ASSERT_EQ(body->seq.size(), 4u);
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(body->seq[r]->kind, StmtKind::kStore);
    EXPECT_EQ(to_string(body->seq[r]->index), to_string(out.flat_index({Expr(r), s})));
  }
  // A statement with nothing to expand is shared.
  Stmt plain = For(i, 4, LoopKind::kSerial, Store(out, {0, i}, f32(1)));
  EXPECT_TRUE(expand_unrolled(plain, {}).body.same_as(plain));
}

TEST(IrPassExpandUnrolled, ReductionsStayLoopsOneNodePerOccurrence) {
  Buffer x("X", {2, 8}, BufferScope::kArgument), d("D", {2}, BufferScope::kArgument);
  Expr k = var("k"), u = var("u");
  Stmt reduction =
      For(k, 8, LoopKind::kUnrolled, Store(d, {0}, d.load({0}) + x.load({Expr(0), k})));
  OrderedReductions found = find_ordered_reductions(reduction);
  ASSERT_EQ(found.size(), 1u);
  // The reduction does not depend on u, yet each of u's iterations gets a node of its own.
  Stmt outer = For(u, 2, LoopKind::kUnrolled, reduction);
  ExpandedStmt e = expand_unrolled(outer, found);
  ASSERT_EQ(e.body->kind, StmtKind::kSeq);
  ASSERT_EQ(e.body->seq.size(), 2u);
  EXPECT_FALSE(e.body->seq[0].same_as(e.body->seq[1]));
  EXPECT_EQ(e.ordered_reductions.size(), 2u);
  for (const Stmt& loop : e.body->seq) {
    EXPECT_EQ(loop->loop_kind, LoopKind::kUnrolled);
    EXPECT_TRUE(e.ordered_reductions.count(loop.get()));
  }
}

TEST(IrPassForwardStores, AccumulationKeepsOnlyItsLastStore) {
  Buffer a("A", {4}, BufferScope::kArgument), c("C", {1}, BufferScope::kArgument);
  std::vector<Stmt> list = {Store(c, {0}, f32(0))};
  for (int k = 0; k < 4; ++k) list.push_back(Store(c, {0}, c.load({0}) + a.load({k})));
  Stmt before = Seq(list);
  Stmt after = forwarded(before);
  Census n = census(after);
  // Each store is overwritten before anything reads C: only the last is left, and no load of C.
  EXPECT_EQ(n.stores["C"], 1) << to_string(after);
  EXPECT_EQ(n.loads["C"], 0) << to_string(after);
  EXPECT_EQ(n.lets, 4);
  ExpectSameResults({a, c}, 1, before, after);
}

TEST(IrPassForwardStores, AReadOfTheBufferKeepsItsStores) {
  Buffer a("A", {4}, BufferScope::kArgument), c("C", {4}, BufferScope::kArgument);
  Buffer o("O", {2}, BufferScope::kArgument);
  Expr i = var("i");
  // In the loop's body, C[i] is read at an index the pass cannot compare with 0: the store of
  // C[0] before that read is live. The second store of C[0] is overwritten unread, and O[1]
  // takes the last one's value.
  Stmt before =
      For(i, 2, LoopKind::kSerial,
          Seq({Store(c, {0}, a.load({0})), Store(o, {i}, c.load_flat(i)), Store(c, {0}, f32(2)),
               Store(c, {0}, f32(3)), Store(o, {1}, c.load({0}))}));
  Stmt after = forwarded(before);
  Census n = census(after);
  EXPECT_EQ(n.stores["C"], 2) << to_string(after);
  EXPECT_EQ(n.loads["C"], 1) << to_string(after);
  ExpectSameResults({a, c, o}, 1, before, after);
}

TEST(IrPassForwardStores, NothingCrossesALoopAGuardOrAnAllocation) {
  Buffer a("A", {4}, BufferScope::kArgument), c("C", {2}, BufferScope::kArgument);
  Buffer o("O", {4}, BufferScope::kArgument), l("L", {1}, BufferScope::kLocal);
  Expr i = var("i");
  Stmt before = Seq({
      Store(c, {0}, a.load({0}) * a.load({1})),
      For(i, 2, LoopKind::kSerial, Store(o, {i}, c.load({0}))),  // another block: a load
      Store(c, {1}, a.load({2}) + f32(1)),
      If(a.load({3}) < f32(0), Store(o, {2}, c.load({1}))),  // a load again
      Allocate(l, Seq({Store(l, {0}, a.load({1})), Store(c, {1}, l.load({0}) * f32(2))})),
      Store(o, {3}, c.load({1})),  // named inside the allocation: a load after it
  });
  Stmt after = forwarded(before);
  Census n = census(after);
  EXPECT_EQ(n.loads["C"], 3) << to_string(after);
  EXPECT_EQ(n.loads["L"], 0) << to_string(after);  // forwarded within the allocation
  ExpectSameResults({a, c, o}, 1, before, after);
}

// The whole pipeline on every template's fallback and seeded configs: the lowered stages compute
// bit for bit what the templates' stages compute, in the interpreter.
TEST(LoweringPipeline, KeepsWhatEveryTemplateComputes) {
  struct Case {
    const char* tmpl;
    const char* workload;
  };
  const Case cases[] = {
      {"dense_nopack.x86", "dense:M=4,N=40,K=32"},
      {"dense_pack.x86", "dense:M=4,N=48,K=32"},
      {"batch_matmul.x86", "batch_matmul:B=2,M=8,N=16,K=8"},
      {"conv2d_NCHWc.x86", "conv2d:N=1,C=8,H=6,W=6,K=16,R=3,S=3,pad=1"},
      {"depthwise_conv2d_NCHWc.x86", "depthwise_conv2d:N=1,C=16,H=6,W=6,R=3,S=3,pad=1"},
      {"conv2d_NCHWc_winograd.x86", "conv2d:N=1,C=8,H=6,W=6,K=8,R=3,S=3,pad=1"},
      {"conv2d_NCHWc_ragged.x86", "conv2d:N=1,C=8,H=5,W=5,K=24,R=1,S=1"},
      {"group_conv2d_nchw.x86", "group_conv2d:N=1,C=8,H=5,W=5,K=8,R=3,S=3,groups=2,pad=1"},
  };
  for (int lanes : {16, 8}) {
    Target target;
    target.triple = "x86_64-pc-linux-gnu";
    target.cpu = lanes == 16 ? "znver4" : "znver3";
    const builder::LoweringOptions options = builder::lowering_options(target);
    for (const Case& c : cases) {
      const ops::Template* t = ops::find_template(c.tmpl);
      ASSERT_NE(t, nullptr) << c.tmpl;
      Result<ops::Workload> w = t->normalize(*ops::Workload::parse(c.workload));
      ASSERT_TRUE(w.ok()) << c.workload << ": " << w.status().message();
      ConfigSpace space = t->space(*w);
      ops::TargetInfo info{lanes};
      std::vector<int64_t> indices = {t->fallback(*w, space, info).index()};
      std::mt19937_64 rng(22);
      for (int k = 0; k < 4; ++k) {
        indices.push_back(space.nth_valid_index(static_cast<int64_t>(rng() % space.size())));
      }
      for (int64_t index : indices) {
        SCOPED_TRACE(std::string(c.tmpl) + " " + c.workload + " config " + std::to_string(index) +
                     " lanes " + std::to_string(lanes));
        Result<ir::Program> program = t->instantiate(*w, space.get(index), info);
        if (!program.ok()) continue;  // a config the template refuses
        ir::Program lowered = *program;
        for (ir::Stage& stage : lowered.stages) {
          stage.body = builder::lower_stage(stage.body, options).body;
        }
        EXPECT_TRUE(bit_identical(run(*program), run(lowered)));
      }
    }
  }
}

}  // namespace
}  // namespace kiln::ir::passes
