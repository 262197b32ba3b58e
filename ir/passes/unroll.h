// Pass: unrolling. Loop kinds only request code shapes (ir/ir.h), so both rewrites here change
// how a nest is emitted, never what it computes:
//  - limit_unrolling keeps a template's unrolled nests within what the code generator is handed
//    (the templates call it at instantiation, through ops/schedule_util.h, so the cost model's
//    features see the nest that is built);
//  - unroll_register_locals is the lowering pipeline's step (builder/lower.h): a serial loop
//    that indexes a local buffer the vector registers can hold becomes an unrolled one.
// Both count unrolled work with unrolled_work, the one count of what a nest becomes once its
// unrolled loops are expanded.
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace kiln::ir::passes {

// How unrolled_work expands a nest.
enum class UnrollView : uint8_t {
  // As scheduled: an unrolled loop multiplies its body by its extent, a vectorized one by its
  // target-width vectors (ceil(extent / simd_lanes)), serial and parallel loops stay loops (their
  // body counts once); a guard counts both branches.
  kAsScheduled,
  // Every loop expanded, as the pipeline expands a loop unroll_register_locals makes unrolled
  // (expand_unrolled.h): each loop multiplies its body by its extent, except an unrolled loop
  // over one store, which counts one (it may be an ordered reduction); a guard counts as over
  // any limit (kUnrolledGuardWork).
  kFullyExpanded,
};

// What a guard (If) counts in the kFullyExpanded view: more than unroll_register_locals unrolls.
inline constexpr int64_t kUnrolledGuardWork = 1025;

// Straight-line statements `stmt` becomes in `view` (stores; in kAsScheduled, SIMD stores of a
// `simd_lanes`-wide target). 0 for an undefined statement.
int64_t unrolled_work(const Stmt& stmt, UnrollView view, int simd_lanes);

// `stmt` with every maximal nest of unrolled loops that exceeds `max_ops` (unrolled_work
// kAsScheduled) cut down to at most min(max_ops, reshaped_ops): its outermost loops become
// serial, the first loop whose body fits is split into a serial loop over an unrolled one (the
// unrolled part the largest divisor of its extent that fits; a Store's per-dimension indices are
// rewritten with its flat index). A nest within `max_ops` is returned unchanged.
Stmt limit_unrolling(const Stmt& stmt, int64_t max_ops, int64_t reshaped_ops, int simd_lanes);

// `stmt` with each serial loop of extent > 1 that indexes a local buffer (allocated around it)
// of at most `register_floats` elements, and that expands to at most `max_stores` stores
// (unrolled_work kFullyExpanded), made unrolled: every access to the buffer then has a constant
// index and SROA keeps it in registers from the start (left a loop, LICM has to promote it loop
// by loop, which took most of the optimizer's time on dense_nopack's write-back). Loops are
// decided outermost first, on the kinds the schedule gave them. Nodes left alone are shared.
// REQUIRES max_stores < kUnrolledGuardWork (so that a guarded body is never unrolled).
Stmt unroll_register_locals(const Stmt& stmt, int64_t register_floats, int64_t max_stores);

}  // namespace kiln::ir::passes
