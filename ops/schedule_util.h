// Schedule helpers every template shares: reading split knobs, picking factors as TVM's
// fallbacks do, and keeping a config's loop nest buildable without refusing it.
//
// TVM builds every config of its spaces: it unrolls what the schedule says and leaves the rest
// to LLVM, and a local buffer too large for the stack becomes a heap workspace. kiln instead
// bounds what it hands its code generator, without changing what a kernel computes:
//  - limit_unrolling turns the outer part of an over-large unrolled nest into serial loops,
//  - fit_tile picks a sub-tile that fits the stack cap, so that a template computes a large
//    accumulator tile block by block (each output still sums its terms in the same order).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"
#include "ops/config_space.h"
#include "ops/template.h"

namespace kiln::ops {

// The sizes of split knob `knob` over an axis of `length`, outermost first, with a leading -1
// resolved. An InstantiationError naming `tmpl` and the knob (never an abort) when the knob is
// missing, is not a split, has other than `num_outputs` sizes or does not tile the axis exactly.
Result<std::vector<int64_t>> tile_sizes(std::string_view tmpl, const ConfigEntity& config,
                                        std::string_view knob, int64_t length, size_t num_outputs);

// OK for the default layout; for an NCHW[x]c one, an InstantiationError naming `tmpl`: a matrix
// template (dense, batch_matmul) takes none.
Status default_layout_only(std::string_view tmpl, const ActivationLayout& layout);

// The value of option knob `knob` (define_knob's); an InstantiationError when the config has no
// such knob or it is not an option.
Result<nlohmann::json> option(const ConfigEntity& config, std::string_view knob);

// Options of a split knob with AutoTVM's default "factors" policy into `num_outputs` axes.
SplitOptions factor_splits(int num_outputs,
                           std::function<bool(const SplitEntity&)> filter = nullptr);

// The largest divisor of n that is <= limit (1 when limit < 1), as TVM's fallbacks pick factors.
int64_t largest_divisor_at_most(int64_t n, int64_t limit);

// SIMD statements of the target's width that one store of `lanes` lanes becomes.
int64_t vector_ops(int64_t lanes, const TargetInfo& target);

// Straight-line SIMD statements the code generator emits for `stmt` once its unrolled loops are
// expanded: ir::passes::unrolled_work as scheduled, for the target's width (ir/passes/unroll.h).
int64_t unrolled_vector_ops(const ir::Stmt& stmt, const TargetInfo& target);

// `stmt` with every maximal nest of unrolled loops that exceeds `max_ops` (as counted by
// unrolled_vector_ops) cut down to at most `reshaped_ops`: ir::passes::limit_unrolling for the
// target's width. Loop kinds only request code shapes, so the program computes exactly what
// `stmt` does; a nest within `max_ops` is returned unchanged.
ir::Stmt limit_unrolling(const ir::Stmt& stmt, int64_t max_ops, int64_t reshaped_ops,
                         const TargetInfo& target);

// A sub-tile of a tile of `dims` (outermost first) with at most `max_elements` elements, each
// size a divisor of its dimension: inner dimensions are kept whole first, as far as they fit.
// Returns `dims` itself when the tile fits.
std::vector<int64_t> fit_tile(const std::vector<int64_t>& dims, int64_t max_elements);

// A serial loop over `count` blocks. `index` is the block variable, or the constant 0 when
// there is one block, and wrap() then adds no loop, so an unblocked nest is unchanged.
struct SerialBlocks {
  SerialBlocks(const std::string& name, int64_t count);
  ir::Stmt wrap(ir::Stmt body) const;
  ir::Expr index;
  int64_t count;
};

}  // namespace kiln::ops
