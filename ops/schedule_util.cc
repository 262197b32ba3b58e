#include "ops/schedule_util.h"

#include <algorithm>
#include <variant>

#include "ir/int_arith.h"
#include "ir/passes/unroll.h"

namespace kiln::ops {

using ir::Expr;
using ir::LoopKind;
using ir::Stmt;
using ir::StmtKind;

Result<std::vector<int64_t>> tile_sizes(std::string_view tmpl, const ConfigEntity& config,
                                        std::string_view knob, int64_t length, size_t num_outputs) {
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string where = std::string(tmpl) + ": knob " + std::string(knob);
  const Entity* e = config.find(knob);
  const SplitEntity* split = e ? std::get_if<SplitEntity>(e) : nullptr;
  if (split == nullptr) return InstantiationError(where + " is missing or not a split");
  std::vector<int64_t> size = split->size;
  if (size.size() != num_outputs) {
    return InstantiationError(where + " has " + str(static_cast<int64_t>(size.size())) +
                              " sizes, expected " + str(static_cast<int64_t>(num_outputs)));
  }
  int64_t inner = 1;
  for (size_t i = 1; i < size.size(); ++i) {
    if (size[i] < 1 || size[i] > length || inner * size[i] > length) {
      return InstantiationError(where + " size " + str(size[i]) + " does not fit length " +
                                str(length));
    }
    inner *= size[i];
  }
  if (length % inner != 0 || (size[0] != -1 && size[0] != length / inner)) {
    return InstantiationError(where + " does not tile length " + str(length) + " exactly");
  }
  size[0] = length / inner;
  return size;
}

Status default_layout_only(std::string_view tmpl, const ActivationLayout& layout) {
  if (layout.is_default()) return Status::Ok();
  return InstantiationError(std::string(tmpl) + ": NCHW[x]c layouts are for convolutions");
}

Result<nlohmann::json> option(const ConfigEntity& config, std::string_view knob) {
  const Entity* e = config.find(knob);
  const auto* other = e ? std::get_if<OtherOptionEntity>(e) : nullptr;
  if (!other) return InstantiationError("config has no option knob '" + std::string(knob) + "'");
  return other->val;
}

SplitOptions factor_splits(int num_outputs, std::function<bool(const SplitEntity&)> filter) {
  SplitOptions opts;
  opts.num_outputs = num_outputs;
  opts.filter = std::move(filter);
  return opts;
}

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  return ir::largest_divisor_at_most(n, limit);
}

int64_t vector_ops(int64_t lanes, const TargetInfo& target) {
  int64_t simd = std::max(1, target.simd_lanes);
  return (lanes + simd - 1) / simd;
}

int64_t unrolled_vector_ops(const Stmt& stmt, const TargetInfo& target) {
  return ir::passes::unrolled_work(stmt, ir::passes::UnrollView::kAsScheduled, target.simd_lanes);
}

Stmt limit_unrolling(const Stmt& stmt, int64_t max_ops, int64_t reshaped_ops,
                     const TargetInfo& target) {
  return ir::passes::limit_unrolling(stmt, max_ops, reshaped_ops, target.simd_lanes);
}

std::vector<int64_t> fit_tile(const std::vector<int64_t>& dims, int64_t max_elements) {
  std::vector<int64_t> sub(dims.size(), 1);
  int64_t elements = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    sub[i] = largest_divisor_at_most(dims[i], max_elements / elements);
    elements *= sub[i];
  }
  return sub;
}

SerialBlocks::SerialBlocks(const std::string& name, int64_t count)
    : index(count > 1 ? ir::var(name) : Expr(0)), count(count) {}

Stmt SerialBlocks::wrap(Stmt body) const {
  if (count <= 1) return body;
  return ir::For(index, count, LoopKind::kSerial, std::move(body));
}

}  // namespace kiln::ops
