#include "ir/passes/split_simd.h"

#include <string>
#include <utility>
#include <vector>

#include "ir/analysis.h"
#include "ir/mutator.h"
#include "ir/passes/simd_legality.h"

namespace kiln::ir::passes {

namespace {

bool power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

class SplitWideSimd final : public IRMutator {
 public:
  explicit SplitWideSimd(int simd_lanes) : lanes_(simd_lanes) {}

 protected:
  Stmt mutate_for(const Stmt& loop) override {
    Stmt visited = IRMutator::mutate_for(loop);
    const int64_t extent = visited->extent;
    if (visited->loop_kind != LoopKind::kVectorized || extent <= lanes_ || power_of_two(extent) ||
        !simd_safe(visited)) {
      return visited;
    }
    const ExprNode* v = visited->loop_var.get();
    std::vector<Stmt> chunks;
    for (int64_t start = 0; start < extent; start += lanes_) {
      const int64_t width = std::min<int64_t>(lanes_, extent - start);
      Expr lane = var(visited->loop_var->name + "_" + std::to_string(chunks.size()));
      Expr at = start == 0 ? lane : Expr(start) + lane;
      chunks.push_back(For(lane, width, LoopKind::kVectorized, substitute(visited->body, v, at)));
    }
    return Seq(std::move(chunks));
  }

 private:
  int64_t lanes_;
};

}  // namespace

Stmt split_wide_simd(const Stmt& stmt, int simd_lanes) {
  if (!stmt.defined()) return stmt;
  SplitWideSimd pass(simd_lanes);
  return pass.mutate(stmt);
}

}  // namespace kiln::ir::passes
