// The IR's node kinds, each listed once: the expression kinds and the statement kinds, with each
// kind's printable name and the IRVisitor / IRMutator hook it dispatches to. Everything that
// enumerates the kinds is generated from these two lists: the ExprKind and StmtKind enums (in
// list order, from 0), expr_kind_name / stmt_kind_name, and the dispatch of IRVisitor::visit and
// IRMutator::mutate (ir/visitor.cc, ir/mutator.cc).
//
// Adding a node kind: one row here, its fields in ExprNode/StmtNode and a constructor (ir/ir.h),
// and, for a new hook, its name in KILN_IR_*_HOOKS and its defaults in ir/visitor.cc and
// ir/mutator.cc (a kind that reuses a hook, as every two-operand kind uses `binary`, needs
// neither). The hand-written switches over the kinds that remain (semantics: the printer's
// syntax, the interpreter's arithmetic, constant folding, the code generator) then want a case;
// the compiler names those without a default case (-Wswitch).
//
// Each row is X(enumerator, name, hook): `enumerator` the ExprKind/StmtKind value, `name` the
// kind's name as printed by *_kind_name, `hook` the suffix of its visit_* / mutate_* hook, one
// of KILN_IR_*_HOOKS.
#pragma once

#include <cstddef>
#include <cstdint>

// The rows are aligned by hand (clang-format reads the names and, or, not as operators).
// clang-format off

// Expression kinds. Operands live in ExprNode::a, b, c (see each row).
#define KILN_IR_EXPR_KINDS(X)                                                     \
  X(kIntImm,   int_imm,   int_imm)                                                \
  X(kFloatImm, float_imm, float_imm)                                              \
  X(kVar,      var,       var)                                                    \
  X(kAdd,      add,       binary)                                                 \
  X(kSub,      sub,       binary)                                                 \
  X(kMul,      mul,       binary)                                                 \
  X(kDiv,      div,       binary) /* float division, or floor division on ints */ \
  X(kMod,      mod,       binary) /* floor modulo, integers only */               \
  X(kMin,      min,       binary)                                                 \
  X(kMax,      max,       binary)                                                 \
  X(kLT,       lt,        binary)                                                 \
  X(kLE,       le,        binary)                                                 \
  X(kEQ,       eq,        binary)                                                 \
  X(kNE,       ne,        binary)                                                 \
  X(kAnd,      and,       binary)                                                 \
  X(kOr,       or,        binary)                                                 \
  X(kNot,      not,       not)                                                    \
  X(kSelect,   select,    select) /* operands: condition, true value, false */    \
  X(kLoad,     load,      load)   /* buffer[a] */                                 \
  X(kCall,     call,      call)   /* a math function (call_op) of float a, b */

// Statement kinds.
#define KILN_IR_STMT_KINDS(X)         \
  X(kFor,      for,       for)        \
  X(kStore,    store,     store)      \
  X(kSeq,      seq,       seq)        \
  X(kIf,       if,        if)         \
  X(kAllocate, allocate,  allocate)

// The hooks of the rows above, each once, as H(hook, extra...): IRVisitor and IRMutator
// declare visit_<hook> and mutate_<hook> from these (KILN_IR_DECLARE_HOOKS).
#define KILN_IR_EXPR_HOOKS(H, ...)                                                   \
  H(int_imm, __VA_ARGS__) H(float_imm, __VA_ARGS__) H(var, __VA_ARGS__)              \
  H(binary, __VA_ARGS__) H(not, __VA_ARGS__) H(select, __VA_ARGS__)                  \
  H(load, __VA_ARGS__) H(call, __VA_ARGS__)
#define KILN_IR_STMT_HOOKS(H, ...)                                                   \
  H(for, __VA_ARGS__) H(store, __VA_ARGS__) H(seq, __VA_ARGS__) H(if, __VA_ARGS__)   \
  H(allocate, __VA_ARGS__)

// Declares a hook class's protected hooks: `virtual ExprResult <prefix><hook>(const Expr&)` for
// every expression hook, and the same with StmtResult and Stmt for every statement hook.
#define KILN_IR_DECLARE_HOOK(hook, prefix, Result, Node) virtual Result prefix##hook(const Node&);
#define KILN_IR_DECLARE_HOOKS(prefix, ExprResult, StmtResult)          \
  KILN_IR_EXPR_HOOKS(KILN_IR_DECLARE_HOOK, prefix, ExprResult, Expr) \
  KILN_IR_STMT_HOOKS(KILN_IR_DECLARE_HOOK, prefix, StmtResult, Stmt)

// clang-format on

namespace kiln::ir {

#define KILN_IR_KIND_ENUMERATOR(enumerator, name, hook) enumerator,
enum class ExprKind : uint8_t { KILN_IR_EXPR_KINDS(KILN_IR_KIND_ENUMERATOR) };
enum class StmtKind : uint8_t { KILN_IR_STMT_KINDS(KILN_IR_KIND_ENUMERATOR) };
#undef KILN_IR_KIND_ENUMERATOR

#define KILN_IR_KIND_COUNT(enumerator, name, hook) +1
inline constexpr size_t kNumExprKinds = 0 KILN_IR_EXPR_KINDS(KILN_IR_KIND_COUNT);
inline constexpr size_t kNumStmtKinds = 0 KILN_IR_STMT_KINDS(KILN_IR_KIND_COUNT);
#undef KILN_IR_KIND_COUNT

// "int_imm", "add", ..., "call"; "for", ..., "allocate". "?" for a value outside the enum.
const char* expr_kind_name(ExprKind kind);
const char* stmt_kind_name(StmtKind kind);

// The dispatch IRVisitor and IRMutator share: calls, on `self`, the entry of `hooks` for the
// kind of `node` (defined, made by the constructors of ir/ir.h). `hooks` holds one member
// function per kind, in list order, as a callback of KILN_IR_*_KINDS lists them, so the entry
// at a kind's value is that kind's hook.
template <typename Self, typename Hook, size_t N, typename Handle>
auto call_hook(Self& self, const Hook (&hooks)[N], const Handle& node) {
  return (self.*hooks[static_cast<size_t>(node->kind)])(node);
}

}  // namespace kiln::ir
