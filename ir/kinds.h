// The IR's node kinds, each listed once: the expression kinds and the statement kinds, with each
// kind's printable name and the hook it dispatches to. Everything that enumerates the kinds is
// generated from these lists: the ExprKind and StmtKind enums (in list order, from 0),
// expr_kind_name / stmt_kind_name, the outline and dispatch of IRVisitor and IRMutator
// (KILN_IR_HOOK_CLASS, KILN_IR_DEFINE_ENTRIES), and the hook tables of the classes that walk the
// IR with results of their own (the emitter, builder/codegen_llvm.cc; the unrolled-work count,
// ir/passes/unroll.cc), which dispatch through KILN_IR_*_HOOK_TABLE and call_hook.
//
// Adding a node kind: one row here, its fields in ExprNode/StmtNode and a constructor (ir/ir.h),
// and, for a new hook, its name in KILN_IR_*_HOOKS and its defaults in ir/visitor.cc and
// ir/mutator.cc (a kind that reuses a hook, as every two-operand kind uses `binary`, needs
// neither). Every class with a hook table then fails to compile until it has the new kind's
// hook (the emitter: its emit_<hook>, or for a binary kind its op_<name>). The hand-written
// switches over the kinds that remain (semantics: the printer's syntax, the interpreter's
// arithmetic, constant folding, the cost model's features) want a case; the compiler names those
// without a default case (-Wswitch).
//
// Each row is X(enumerator, name, hook, extra...): `enumerator` the ExprKind/StmtKind value,
// `name` the kind's name as printed by *_kind_name, `hook` the suffix of its visit_* / mutate_*
// hook, one of KILN_IR_*_HOOKS; `extra` is what the list's user passed after X.
#pragma once

#include <cstddef>
#include <cstdint>

// The rows are aligned by hand (clang-format reads the names and, or, not as operators).
// clang-format off

// Expression kinds. Operands live in ExprNode::a, b, c (see each row). The kinds of two
// operands a and b, all with the hook `binary`, are a list of their own (KILN_IR_BINARY_KINDS),
// in place in the expression list, so that code with one operation per binary kind (the
// emitter's instructions) can generate its table from it.
#define KILN_IR_BINARY_KINDS(X, ...)                                                           \
  X(kAdd,      add,       binary, __VA_ARGS__)                                                 \
  X(kSub,      sub,       binary, __VA_ARGS__)                                                 \
  X(kMul,      mul,       binary, __VA_ARGS__)                                                 \
  X(kDiv,      div,       binary, __VA_ARGS__) /* float division, or floor division on ints */ \
  X(kMod,      mod,       binary, __VA_ARGS__) /* floor modulo, integers only */               \
  X(kMin,      min,       binary, __VA_ARGS__)                                                 \
  X(kMax,      max,       binary, __VA_ARGS__)                                                 \
  X(kLT,       lt,        binary, __VA_ARGS__)                                                 \
  X(kLE,       le,        binary, __VA_ARGS__)                                                 \
  X(kEQ,       eq,        binary, __VA_ARGS__)                                                 \
  X(kNE,       ne,        binary, __VA_ARGS__)                                                 \
  X(kAnd,      and,       binary, __VA_ARGS__)                                                 \
  X(kOr,       or,        binary, __VA_ARGS__)

#define KILN_IR_EXPR_KINDS(X, ...)                                                             \
  X(kIntImm,   int_imm,   int_imm,   __VA_ARGS__)                                              \
  X(kFloatImm, float_imm, float_imm, __VA_ARGS__)                                              \
  X(kVar,      var,       var,       __VA_ARGS__)                                              \
  KILN_IR_BINARY_KINDS(X, __VA_ARGS__)                                                         \
  X(kNot,      not,       not,       __VA_ARGS__)                                              \
  X(kSelect,   select,    select,    __VA_ARGS__) /* operands: condition, true value, false */ \
  X(kLoad,     load,      load,      __VA_ARGS__) /* buffer[a] */                              \
  X(kCall,     call,      call,      __VA_ARGS__) /* a math function (call_op) of float a, b */

// Statement kinds.
#define KILN_IR_STMT_KINDS(X, ...)                  \
  X(kFor,      for,       for,      __VA_ARGS__)    \
  X(kStore,    store,     store,    __VA_ARGS__)    \
  X(kSeq,      seq,       seq,      __VA_ARGS__)    \
  X(kIf,       if,        if,       __VA_ARGS__)    \
  X(kAllocate, allocate,  allocate, __VA_ARGS__)    \
  X(kLet,      let,       let,      __VA_ARGS__)    /* loop_var is value in body */

// The hooks of the rows above, each once, as H(hook, extra...): IRVisitor and IRMutator
// declare visit_<hook> and mutate_<hook> from these (KILN_IR_DECLARE_HOOKS).
#define KILN_IR_EXPR_HOOKS(H, ...)                                                   \
  H(int_imm, __VA_ARGS__) H(float_imm, __VA_ARGS__) H(var, __VA_ARGS__)              \
  H(binary, __VA_ARGS__) H(not, __VA_ARGS__) H(select, __VA_ARGS__)                  \
  H(load, __VA_ARGS__) H(call, __VA_ARGS__)
#define KILN_IR_STMT_HOOKS(H, ...)                                                   \
  H(for, __VA_ARGS__) H(store, __VA_ARGS__) H(seq, __VA_ARGS__) H(if, __VA_ARGS__)   \
  H(allocate, __VA_ARGS__) H(let, __VA_ARGS__)

// Declares a hook class's protected hooks: `virtual ExprResult <prefix><hook>(const Expr&)` for
// every expression hook, and the same with StmtResult and Stmt for every statement hook.
#define KILN_IR_DECLARE_HOOK(hook, prefix, Result, Node) virtual Result prefix##hook(const Node&);
#define KILN_IR_DECLARE_HOOKS(prefix, ExprResult, StmtResult)          \
  KILN_IR_EXPR_HOOKS(KILN_IR_DECLARE_HOOK, prefix, ExprResult, Expr) \
  KILN_IR_STMT_HOOKS(KILN_IR_DECLARE_HOOK, prefix, StmtResult, Stmt)

// The outline IRVisitor and IRMutator share (ir/visitor.h, ir/mutator.h): a virtual destructor,
// the public entry points `entry(const Expr&)` and `entry(const Stmt&)` (dispatching to the
// hooks, KILN_IR_DEFINE_ENTRIES), and the protected virtual hooks <prefix><hook>.
#define KILN_IR_HOOK_CLASS(Class, entry, prefix, ExprResult, StmtResult) \
 public:                                                                 \
  virtual ~Class() = default;                                            \
  virtual ExprResult entry(const Expr& expr);                            \
  virtual StmtResult entry(const Stmt& stmt);                            \
                                                                         \
 protected:                                                              \
  KILN_IR_DECLARE_HOOKS(prefix, ExprResult, StmtResult)

// A table of `Class`'s member functions <prefix><hook>, one entry per kind in list order, so
// that the entry at a kind's value is that kind's hook: the initializer of an array that
// call_hook indexes. Any class can dispatch this way, with hooks of any result type (the
// emitter's return LLVM values); a kind added to the lists then fails to compile in every class
// until it has that kind's hook. KILN_IR_BINARY_HOOK_TABLE is the same over the binary kinds by
// their names (<prefix><name>: `op_add` .. `op_or`), indexed by binary_kind_index.
#define KILN_IR_HOOK_ENTRY(enumerator, name, hook, Class, prefix) &Class::prefix##hook,
#define KILN_IR_NAMED_ENTRY(enumerator, name, hook, Class, prefix) &Class::prefix##name,
#define KILN_IR_EXPR_HOOK_TABLE(Class, prefix) {KILN_IR_EXPR_KINDS(KILN_IR_HOOK_ENTRY, Class, prefix)}
#define KILN_IR_STMT_HOOK_TABLE(Class, prefix) {KILN_IR_STMT_KINDS(KILN_IR_HOOK_ENTRY, Class, prefix)}
#define KILN_IR_BINARY_HOOK_TABLE(Class, prefix) \
  {KILN_IR_BINARY_KINDS(KILN_IR_NAMED_ENTRY, Class, prefix)}

// Defines a KILN_IR_HOOK_CLASS's entry points: an undefined handle gives `undefined` (an
// expression of the handle `node`), any other the hook of its kind.
#define KILN_IR_DEFINE_ENTRY(Class, entry, prefix, Result, Node, TABLE, undefined)   \
  Result Class::entry(const Node& node) {                                           \
    static constexpr Result (Class::*kHooks[])(const Node&) = TABLE(Class, prefix); \
    return node.defined() ? call_hook(*this, kHooks, node) : undefined;             \
  }
#define KILN_IR_DEFINE_ENTRIES(Class, entry, prefix, ExprResult, StmtResult, undefined)          \
  KILN_IR_DEFINE_ENTRY(Class, entry, prefix, ExprResult, Expr, KILN_IR_EXPR_HOOK_TABLE, undefined) \
  KILN_IR_DEFINE_ENTRY(Class, entry, prefix, StmtResult, Stmt, KILN_IR_STMT_HOOK_TABLE, undefined)

// clang-format on

namespace kiln::ir {

#define KILN_IR_KIND_ENUMERATOR(enumerator, name, hook, ...) enumerator,
enum class ExprKind : uint8_t { KILN_IR_EXPR_KINDS(KILN_IR_KIND_ENUMERATOR) };
enum class StmtKind : uint8_t { KILN_IR_STMT_KINDS(KILN_IR_KIND_ENUMERATOR) };
#undef KILN_IR_KIND_ENUMERATOR

#define KILN_IR_KIND_COUNT(enumerator, name, hook, ...) +1
inline constexpr size_t kNumExprKinds = 0 KILN_IR_EXPR_KINDS(KILN_IR_KIND_COUNT);
inline constexpr size_t kNumBinaryKinds = 0 KILN_IR_BINARY_KINDS(KILN_IR_KIND_COUNT);
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

// The binary kinds are contiguous in ExprKind: the position of one in KILN_IR_BINARY_KINDS, the
// index of its entry in a KILN_IR_BINARY_HOOK_TABLE. REQUIRES is_binary(kind).
#define KILN_IR_KIND_VALUE(enumerator, name, hook, ...) ExprKind::enumerator,
inline constexpr ExprKind kBinaryKinds[] = {KILN_IR_BINARY_KINDS(KILN_IR_KIND_VALUE)};
#undef KILN_IR_KIND_VALUE
inline constexpr ExprKind kFirstBinaryKind = kBinaryKinds[0];
constexpr bool is_binary(ExprKind kind) {
  return static_cast<size_t>(kind) - static_cast<size_t>(kFirstBinaryKind) < kNumBinaryKinds;
}
constexpr size_t binary_kind_index(ExprKind kind) {
  return static_cast<size_t>(kind) - static_cast<size_t>(kFirstBinaryKind);
}

}  // namespace kiln::ir
