// kiln's loop-nest IR: the form every schedule template lowers a config to, and the only
// input of the code generator.
//
// Semantics:
//  - Integer expressions are int64 and never overflow for the sizes kiln handles. Div and Mod
//    on integers are *floor* division and modulo (like TVM's floordiv/floormod).
//  - Buffers hold float32 and are indexed with one flat int64 index (see Buffer::flat_index).
//  - Every loop runs its variable over [0, extent) with a constant extent. A loop's kind is a
//    request to the code generator: parallel (chunks on the thread pool), vectorized (one SIMD
//    body with the variable as lanes), unrolled (the body repeated with constant variables).
//  - Nodes are immutable and shared; an Expr/Stmt is a handle to one. Var identity is node
//    identity, names are for printing only.
//
// Representation: one tagged node per family. An ExprNode (StmtNode) carries a kind and the
// fields of every kind, each used by the kinds its comment names; the kinds themselves are
// listed once, in ir/kinds.h, and the enums, the kind names and the IRVisitor / IRMutator
// dispatch are generated from those lists, so a new kind is one row there plus its hook's
// default. Halide's design (one struct per node with only its fields, and a visitor that
// dispatches on the struct) was the alternative: it types each node's fields, but converting to
// it changes every `e->a` / `s->body` access, the Expr/Stmt handles and the constructors that
// the templates, the code generator and the passes being written against this header use. The
// X-macro lists give the one-edit property with the node layout, the handles, the constructors
// and the visitor/mutator hooks kept as they are.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "ir/kinds.h"

namespace kiln::ir {

enum class DType : uint8_t { kInt64, kFloat32, kBool };

// The math functions the IR can call, on float32 (libm semantics, as C's expf, erff, powf...).
enum class CallOp : uint8_t { kExp, kLog, kSqrt, kTanh, kErf, kPow, kAbs, kFloor, kCeil };
const char* call_op_name(CallOp op);  // "exp", "log", ...
int call_op_arity(CallOp op);         // 2 for pow, 1 otherwise

// Where a buffer's storage lives.
enum class BufferScope : uint8_t {
  kArgument,   // a kernel input or output, in the user's layout, owned by the caller
  kWorkspace,  // an intermediate (e.g. packed weights) owned by the runtime, kept across stages
  kLocal,      // introduced by an Allocate statement: stack storage of one loop body
};

struct BufferNode {
  std::string name;
  std::vector<int64_t> shape;
  BufferScope scope = BufferScope::kArgument;
  int64_t num_elements() const;
};

class Expr;
struct ExprNode;

// A handle to a float32 buffer. Loads and stores take either a flat index or one index per
// dimension (row-major).
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, std::vector<int64_t> shape, BufferScope scope);

  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  bool defined() const { return node_ != nullptr; }
  bool same_as(const Buffer& other) const { return node_ == other.node_; }

  Expr flat_index(const std::vector<Expr>& indices) const;
  Expr load(const std::vector<Expr>& indices) const;  // multi-dimensional load
  Expr load_flat(const Expr& index) const;

 private:
  std::shared_ptr<const BufferNode> node_;
};

class Expr {
 public:
  Expr() = default;
  Expr(int64_t value);                                    // NOLINT: an integer literal is an IntImm
  Expr(int value) : Expr(static_cast<int64_t>(value)) {}  // NOLINT
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  bool defined() const { return node_ != nullptr; }
  bool same_as(const Expr& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct ExprNode {
  ExprKind kind = ExprKind::kIntImm;
  DType dtype = DType::kInt64;
  int64_t int_value = 0;          // kIntImm
  double float_value = 0;         // kFloatImm
  std::string name;               // kVar
  Expr a, b, c;                   // operands, by kind
  Buffer buffer;                  // kLoad
  CallOp call_op = CallOp::kExp;  // kCall
};

// Constructors. Arithmetic folds constants (x*1, x+0, 2*3, ...) so that generated index
// expressions stay readable; it never changes a value.
Expr var(std::string name);               // an int64 variable (loop variables)
Expr var(std::string name, DType dtype);  // a variable of any type (Let)
Expr f32(double value);
Expr make_binary(ExprKind kind, Expr a, Expr b);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floor division on integers
Expr operator%(Expr a, Expr b);  // floor modulo
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr cond, Expr t, Expr f);
// Math calls on float32 operands (KILN_CHECKed: float operands, the op's arity).
Expr call(CallOp op, std::vector<Expr> args);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr pow(Expr base, Expr exponent);
Expr abs(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);

bool is_const_int(const Expr& e, int64_t* value = nullptr);

enum class LoopKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled };
const char* loop_kind_name(LoopKind kind);

class Stmt;
struct StmtNode;

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  bool defined() const { return node_ != nullptr; }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

struct StmtNode {
  StmtKind kind = StmtKind::kSeq;
  // kFor
  Expr loop_var;
  int64_t extent = 0;
  LoopKind loop_kind = LoopKind::kSerial;
  // kStore: buffer[index] = value.  kAllocate: buffer (scope kLocal) lives for body.
  Buffer buffer;
  Expr index, value;
  // kStore made by Store(buffer, indices, value): the per-dimension indices that `index`
  // flattens, kept for passes that need coordinates (an epilogue's per-channel bias); empty
  // for StoreFlat. Passes that rewrite `index` must rewrite or drop these.
  std::vector<Expr> indices;
  // kIf
  Expr condition;
  Stmt then_case, else_case;  // else_case may be undefined
  // kLet: loop_var (a variable of value's dtype) names `value`, evaluated once, in body; uses
  // loop_var and value.
  // kFor, kAllocate, kLet
  Stmt body;
  // kSeq
  std::vector<Stmt> seq;
};

Stmt For(Expr loop_var, int64_t extent, LoopKind kind, Stmt body);
// A statement from a node built field by field: for passes that copy a node and edit a field,
// keeping the others (the constructors below check their arguments; this does not).
Stmt make_stmt(StmtNode node);
Stmt Store(const Buffer& buffer, const std::vector<Expr>& indices, Expr value);
Stmt StoreFlat(const Buffer& buffer, Expr index, Expr value);
Stmt Seq(std::vector<Stmt> stmts);
Stmt If(Expr condition, Stmt then_case, Stmt else_case = Stmt());
Stmt Allocate(const Buffer& local_buffer, Stmt body);
// let var = value in body. `var` is a fresh variable of value's dtype (var(name, dtype)).
Stmt Let(Expr var, Expr value, Stmt body);

// Builds a loop nest from the outside in: loops[0] is outermost. Convenience for templates.
struct LoopSpec {
  Expr var;
  int64_t extent;
  LoopKind kind = LoopKind::kSerial;
};
Stmt LoopNest(const std::vector<LoopSpec>& loops, Stmt body);

// One function of a kernel artifact. A stage reads and writes the program's buffers.
struct Stage {
  std::string name;  // the exported symbol
  Stmt body;
  bool timed = true;  // false for layout transforms that AutoTVM does not time (weight packing)
};

// A lowered kernel: its buffers (arguments first: inputs then outputs, then workspace) and the
// stages to run in order. Running every stage computes the outputs from the inputs; the
// timed stages alone recompute them from the workspace the untimed ones prepared.
struct Program {
  std::string name;
  std::vector<Buffer> buffers;
  int num_inputs = 0;
  int num_outputs = 0;
  std::vector<Stage> stages;

  int buffer_index(const BufferNode* buffer) const;  // -1 if not a program buffer
};

}  // namespace kiln::ir
