// Analyses over the IR that the code generator, the templates and the cost model share.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace kiln::ir {

// True if `expr` refers to the variable `v`.
bool uses_var(const Expr& expr, const ExprNode* v);

// If `expr` equals c*v + (terms free of v) for a constant c, returns c (0 when v is absent);
// otherwise (v under a division, a product of two v-terms, a load, ...) returns nullopt.
std::optional<int64_t> linear_coefficient(const Expr& expr, const ExprNode* v);

// `expr` with every occurrence of the variable `v` replaced by `value`.
Expr substitute(const Expr& expr, const ExprNode* v, const Expr& value);

// `stmt` with every occurrence of the variable `v` replaced by `value`; a Store that has
// per-dimension indices gets its flat index rebuilt from the substituted ones (Store(), ir/ir.h),
// a flat Store its flat index substituted. Statements `v` does not occur in are shared.
Stmt substitute(const Stmt& stmt, const ExprNode* v, const Expr& value);

// The same for several variables at once: each variable that is a key of `values` is replaced
// by its value.
using VarMap = std::unordered_map<const ExprNode*, Expr>;
Expr substitute(const Expr& expr, const VarMap& values);
Stmt substitute(const Stmt& stmt, const VarMap& values);

// Calls `take` on every loop under `stmt`, outermost first, in statement order; a loop for
// which it returns true is not looked into (an analysis that claims a loop whole).
void visit_loops(const Stmt& stmt, const std::function<bool(const Stmt& loop)>& take);

// Floating-point operations executed by `stmt`: for every store, the float arithmetic in its
// value (+ - * / min max, and one per math call) times the trip count of its enclosing loops.
// Guards (If) are assumed taken, so this is an upper bound for bodies with tail guards.
int64_t count_flops(const Stmt& stmt);

// Variables read by `stmt` that it does not bind itself (its loops' and Lets' variables are
// bound).
std::vector<const ExprNode*> free_vars(const Stmt& stmt);

// Buffers (by node) that `stmt` loads from or stores to, excluding those it allocates itself.
std::vector<const BufferNode*> used_buffers(const Stmt& stmt);

// Calls f on every expression and sub-expression under `stmt` (pre-order) and on every statement.
void visit_exprs(const Expr& expr, const std::function<void(const Expr&)>& f);

// Appends `stmt` to `list`, a sequence's statements in its place (recursively); an undefined
// statement appends nothing.
void append_flattened(std::vector<Stmt>* list, const Stmt& stmt);

// True if x and y compute the same value from the same variables and memory: the same kinds,
// constants and buffers, and the same variable nodes, at every position (no algebra: x + 1 and
// 1 + x differ).
bool structurally_equal(const Expr& x, const Expr& y);

}  // namespace kiln::ir
