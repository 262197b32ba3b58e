// The node kinds of ir/kinds.h: the names, the IRVisitor / IRMutator dispatch and the hook tables
// any class dispatches through, generated from the lists, checked against a hand-written table of
// every kind (a row added to a list without its hook, or a table out of step with the enum, fails
// here).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/kinds.h"
#include "ir/mutator.h"
#include "ir/visitor.h"

namespace kiln::ir {
namespace {

// One node of every expression kind, with the name and hook that kind's row gives it.
struct ExprCase {
  Expr expr;
  ExprKind kind;
  std::string name, hook;
};

std::vector<ExprCase> every_expr_kind() {
  Buffer b("B", {8}, BufferScope::kArgument);
  Expr i = var("i"), j = var("j"), x = b.load_flat(i);
  return {
      {Expr(3), ExprKind::kIntImm, "int_imm", "int_imm"},
      {f32(1.5), ExprKind::kFloatImm, "float_imm", "float_imm"},
      {i, ExprKind::kVar, "var", "var"},
      {i + j, ExprKind::kAdd, "add", "binary"},
      {i - j, ExprKind::kSub, "sub", "binary"},
      {i * j, ExprKind::kMul, "mul", "binary"},
      {i / j, ExprKind::kDiv, "div", "binary"},
      {i % j, ExprKind::kMod, "mod", "binary"},
      {min(i, j), ExprKind::kMin, "min", "binary"},
      {max(i, j), ExprKind::kMax, "max", "binary"},
      {i < j, ExprKind::kLT, "lt", "binary"},
      {i <= j, ExprKind::kLE, "le", "binary"},
      {i == j, ExprKind::kEQ, "eq", "binary"},
      {i != j, ExprKind::kNE, "ne", "binary"},
      {(i < j) && (j < 4), ExprKind::kAnd, "and", "binary"},
      {(i < j) || (j < 4), ExprKind::kOr, "or", "binary"},
      {!(i < j), ExprKind::kNot, "not", "not"},
      {select(i < j, x, f32(0)), ExprKind::kSelect, "select", "select"},
      {x, ExprKind::kLoad, "load", "load"},
      {exp(x), ExprKind::kCall, "call", "call"},
  };
}

struct StmtCase {
  Stmt stmt;
  StmtKind kind;
  std::string name;  // also the hook: every statement kind has its own
};

std::vector<StmtCase> every_stmt_kind() {
  Buffer b("B", {8}, BufferScope::kArgument), t("T", {8}, BufferScope::kLocal);
  Expr i = var("i");
  Stmt store = StoreFlat(b, i, f32(1));
  return {
      {For(i, 8, LoopKind::kSerial, store), StmtKind::kFor, "for"},
      {store, StmtKind::kStore, "store"},
      {Seq({store, store}), StmtKind::kSeq, "seq"},
      {If(i < 4, store), StmtKind::kIf, "if"},
      {Allocate(t, store), StmtKind::kAllocate, "allocate"},
      {Let(var("x", DType::kFloat32), f32(2), store), StmtKind::kLet, "let"},
  };
}

// Records the hook that the node the walk starts from reaches, and stops there: every hook of
// KILN_IR_*_HOOKS is overridden (`override` fails the build for a hook the classes lack).
class FirstHook : public IRVisitor {
 public:
  std::string hook;

 protected:
#define KILN_IR_TEST_VISIT(name, Node) \
  void visit_##name(const Node&) override { hook = #name; }
  KILN_IR_EXPR_HOOKS(KILN_IR_TEST_VISIT, Expr)
  KILN_IR_STMT_HOOKS(KILN_IR_TEST_VISIT, Stmt)
#undef KILN_IR_TEST_VISIT
};

// The same for the mutator; each hook returns its node unchanged.
class FirstMutateHook : public IRMutator {
 public:
  std::string hook;

 protected:
#define KILN_IR_TEST_MUTATE(name, Node)           \
  Node mutate_##name(const Node& node) override { \
    hook = #name;                                 \
    return node;                                  \
  }
  KILN_IR_EXPR_HOOKS(KILN_IR_TEST_MUTATE, Expr)
  KILN_IR_STMT_HOOKS(KILN_IR_TEST_MUTATE, Stmt)
#undef KILN_IR_TEST_MUTATE
};

// A walk with results of its own, dispatching through the tables ir/kinds.h generates as the
// emitter does (builder/codegen_llvm.cc): one hook per kind, and one op per binary kind by name.
// A kind added to the lists fails to compile here until it has its hook.
class KindNamer {
 public:
  size_t walks = 0;  // also keeps the class from being empty, which GCC's -Warray-bounds
                     // misreads in calls through member pointers

  std::string name(const Expr& e) {
    ++walks;
    static constexpr std::string (KindNamer::*kHooks[])(const Expr&) =
        KILN_IR_EXPR_HOOK_TABLE(KindNamer, name_);
    return call_hook(*this, kHooks, e);
  }
  std::string name(const Stmt& s) {
    ++walks;
    static constexpr std::string (KindNamer::*kHooks[])(const Stmt&) =
        KILN_IR_STMT_HOOK_TABLE(KindNamer, name_);
    return call_hook(*this, kHooks, s);
  }

 private:
#define KILN_IR_TEST_NAME(hook, Node) \
  std::string name_##hook(const Node&) { return #hook; }
  KILN_IR_STMT_HOOKS(KILN_IR_TEST_NAME, Stmt)
  KILN_IR_TEST_NAME(int_imm, Expr)
  KILN_IR_TEST_NAME(float_imm, Expr)
  KILN_IR_TEST_NAME(var, Expr)
  KILN_IR_TEST_NAME(not, Expr)
  KILN_IR_TEST_NAME(select, Expr)
  KILN_IR_TEST_NAME(load, Expr)
  KILN_IR_TEST_NAME(call, Expr)
#undef KILN_IR_TEST_NAME
  std::string name_binary(const Expr& e) {
    static constexpr std::string (KindNamer::*kOps[])() = KILN_IR_BINARY_HOOK_TABLE(KindNamer, op_);
    return "binary " + (this->*kOps[binary_kind_index(e->kind)])();
  }
#define KILN_IR_TEST_OP(enumerator, name, hook, ...) \
  std::string op_##name() { return #name; }
  KILN_IR_BINARY_KINDS(KILN_IR_TEST_OP)
#undef KILN_IR_TEST_OP
};

TEST(IrKinds, EveryKindHasItsName) {
  const std::vector<ExprCase> exprs = every_expr_kind();
  ASSERT_EQ(exprs.size(), kNumExprKinds);
  std::set<std::string> names;
  for (size_t k = 0; k < exprs.size(); ++k) {
    ASSERT_EQ(exprs[k].expr->kind, exprs[k].kind) << exprs[k].name;
    EXPECT_EQ(static_cast<size_t>(exprs[k].kind), k) << "the enum follows the list's order";
    EXPECT_EQ(expr_kind_name(exprs[k].kind), exprs[k].name);
    names.insert(expr_kind_name(exprs[k].kind));
  }
  EXPECT_EQ(names.size(), kNumExprKinds);
  const std::vector<StmtCase> stmts = every_stmt_kind();
  ASSERT_EQ(stmts.size(), kNumStmtKinds);
  for (size_t k = 0; k < stmts.size(); ++k) {
    ASSERT_EQ(stmts[k].stmt->kind, stmts[k].kind) << stmts[k].name;
    EXPECT_EQ(static_cast<size_t>(stmts[k].kind), k);
    EXPECT_EQ(stmt_kind_name(stmts[k].kind), stmts[k].name);
  }
  // A value outside the enums has no name, rather than reading past the table.
  EXPECT_STREQ(expr_kind_name(static_cast<ExprKind>(kNumExprKinds)), "?");
  EXPECT_STREQ(stmt_kind_name(static_cast<StmtKind>(kNumStmtKinds)), "?");
}

TEST(IrKinds, VisitorDispatchesEveryKindToItsHook) {
  for (const ExprCase& c : every_expr_kind()) {
    FirstHook v;
    v.visit(c.expr);
    EXPECT_EQ(v.hook, c.hook) << c.name;
  }
  for (const StmtCase& c : every_stmt_kind()) {
    FirstHook v;
    v.visit(c.stmt);
    EXPECT_EQ(v.hook, c.name);
  }
  FirstHook none;
  none.visit(Expr());
  none.visit(Stmt());
  EXPECT_EQ(none.hook, "") << "undefined handles reach no hook";
}

TEST(IrKinds, HookTablesDispatchEveryKindToItsHookAndEveryBinaryKindToItsOp) {
  size_t binary = 0;
  for (const ExprCase& c : every_expr_kind()) {
    KindNamer namer;
    const bool is_binary_row = c.hook == "binary";
    EXPECT_EQ(namer.name(c.expr), is_binary_row ? "binary " + c.name : c.hook) << c.name;
    EXPECT_EQ(is_binary(c.kind), is_binary_row) << c.name;
    if (is_binary_row) {
      EXPECT_EQ(binary_kind_index(c.kind), binary++) << c.name;
    }
  }
  EXPECT_EQ(binary, kNumBinaryKinds);
  EXPECT_FALSE(is_binary(static_cast<ExprKind>(kNumExprKinds)));
  for (const StmtCase& c : every_stmt_kind()) {
    KindNamer namer;
    EXPECT_EQ(namer.name(c.stmt), c.name);
  }
}

TEST(IrKinds, MutatorDispatchesEveryKindToItsHook) {
  for (const ExprCase& c : every_expr_kind()) {
    FirstMutateHook m;
    EXPECT_TRUE(m.mutate(c.expr).same_as(c.expr)) << c.name;
    EXPECT_EQ(m.hook, c.hook) << c.name;
  }
  for (const StmtCase& c : every_stmt_kind()) {
    FirstMutateHook m;
    EXPECT_EQ(m.mutate(c.stmt).get(), c.stmt.get());
    EXPECT_EQ(m.hook, c.name);
  }
  FirstMutateHook none;
  EXPECT_FALSE(none.mutate(Expr()).defined());
  EXPECT_FALSE(none.mutate(Stmt()).defined());
  EXPECT_EQ(none.hook, "");
}

}  // namespace
}  // namespace kiln::ir
