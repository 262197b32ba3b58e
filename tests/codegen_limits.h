// Test helper: asserts that a template's program stays within what kiln hands its code
// generator (ops/limits.h): no local buffer over the stack cap and no unrolled nest over
// kMaxUnrolledVectorOps SIMD statements.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ir/ir.h"
#include "ops/limits.h"
#include "ops/schedule_util.h"
#include "ops/template.h"

namespace kiln::testing_util {

inline void ExpectWithinCodegenLimits(const ir::Program& program, const ops::TargetInfo& target,
                                      const std::string& what) {
  std::function<void(const ir::Stmt&)> walk = [&](const ir::Stmt& s) {
    if (!s.defined()) return;
    if (s->kind == ir::StmtKind::kAllocate) {
      EXPECT_LE(s->buffer->num_elements(), ops::kMaxLocalFloats)
          << what << ": local " << s->buffer->name;
    }
    if (s->kind == ir::StmtKind::kFor && s->loop_kind == ir::LoopKind::kUnrolled) {
      EXPECT_LE(ops::unrolled_vector_ops(s, target), ops::kMaxUnrolledVectorOps)
          << what << ": unrolled loop " << s->loop_var->name;
    }
    walk(s->body);
    walk(s->then_case);
    walk(s->else_case);
    for (const ir::Stmt& c : s->seq) walk(c);
  };
  for (const ir::Stage& stage : program.stages) walk(stage.body);
}

}  // namespace kiln::testing_util
