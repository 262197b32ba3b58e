// Helpers shared by the schedule-template tests (dense, batch_matmul, conv2d, depthwise_conv2d):
// workload normalization that fails the test on error, a statement walker, the SIMD-shape check
// of vectorized loops, and running a program in the interpreter against the template's reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ir/analysis.h"
#include "ir/interpreter.h"
#include "ir/printer.h"
#include "ops/registry.h"

namespace kiln::ops {

// A template and a workload text: the parameter of the tests that run over several of each.
struct Case {
  std::string template_name;
  std::string workload;
};
inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.template_name << " " << c.workload;
}

// `text` parsed and normalized by `t`; a parse or normalization error fails the test.
// Targets as kiln describes them (simd lanes, vector registers, FMA units, FMA latency, L1, L2)
// for the default-config tests: 32 AVX-512 registers, 16 AVX2 ones, a Neon core.
inline const TargetInfo kTestAvx512{16, 32, 2, 4, 48 * 1024, 1024 * 1024};
inline const TargetInfo kTestAvx2{8, 16, 2, 4, 32 * 1024, 512 * 1024};
inline const TargetInfo kTestNeon{4, 32, 2, 4, 64 * 1024, 1024 * 1024};

inline Workload normalized(const Template& t, const std::string& text) {
  auto parsed = Workload::parse(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return Workload();
  auto w = t.normalize(*parsed);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : Workload();
}

// The message with which `t` rejects the workload `text`; accepting it fails the test.
inline std::string normalize_error(const Template& t, const std::string& text) {
  auto w = t.normalize(*Workload::parse(text));
  EXPECT_FALSE(w.ok()) << text << " was accepted";
  return w.ok() ? "" : w.status().message();
}

// The innermost factor of the split knob `knob`.
inline int64_t inner(const ConfigEntity& c, const std::string& knob) {
  return c.split(knob).size.back();
}

// The sizes of every knob of a config whose knobs are all splits, in knob order.
inline std::vector<std::vector<int64_t>> split_sizes(const ConfigEntity& c) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& [name, e] : c.entities()) out.push_back(std::get<SplitEntity>(e).size);
  return out;
}

// Calls f on `s` and every statement under it, pre-order.
inline void walk(const ir::Stmt& s, const std::function<void(const ir::Stmt&)>& f) {
  if (!s.defined()) return;
  f(s);
  walk(s->body, f);
  walk(s->then_case, f);
  walk(s->else_case, f);
  for (const ir::Stmt& c : s->seq) walk(c, f);
}

// The code generator's fast path: a vectorized loop's body is straight-line stores whose index
// moves with the lane, and every load is contiguous or a broadcast (no gathers).
inline ::testing::AssertionResult VectorLoopsAreSimd(const ir::Stmt& stage) {
  std::string error;
  walk(stage, [&](const ir::Stmt& s) {
    if (s->kind != ir::StmtKind::kFor || s->loop_kind != ir::LoopKind::kVectorized) return;
    const ir::ExprNode* v = s->loop_var.get();
    walk(s->body, [&](const ir::Stmt& b) {
      if (b->kind == ir::StmtKind::kSeq) return;
      if (b->kind != ir::StmtKind::kStore) {
        error += "non straight-line body in " + ir::to_string(s) + "\n";
        return;
      }
      if (ir::linear_coefficient(b->index, v) != 1) error += "strided store " + ir::to_string(b);
      ir::visit_exprs(b->value, [&](const ir::Expr& e) {
        if (e->kind != ir::ExprKind::kLoad) return;
        auto c = ir::linear_coefficient(e->a, v);
        if (!c || (*c != 0 && *c != 1)) error += "gather " + ir::to_string(e) + "\n";
      });
    });
  });
  if (error.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << error;
}

// Runs a template's program in the interpreter on deterministic inputs (uniform in [-1, 1),
// drawn from `seed` buffer by buffer) and measures its outputs against the template's reference,
// computed once from the same inputs. Outputs and workspace start as NaN, so an element the
// program never writes shows as an infinite error.
class ReferenceRun {
 public:
  ReferenceRun(const Template& t, const Workload& w, const ir::Program& program, uint64_t seed)
      : program_(program) {
    std::mt19937_64 rng(seed);
    for (const ir::Buffer& b : program_.buffers) {
      data_.emplace_back(b->num_elements(), std::numeric_limits<float>::quiet_NaN());
    }
    for (int i = 0; i < program_.num_inputs; ++i) {
      for (float& x : data_[i]) {
        x = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53 * 2 - 1);
      }
    }
    std::vector<const float*> inputs;
    for (int i = 0; i < program_.num_inputs; ++i) inputs.push_back(data_[i].data());
    std::vector<float*> outputs;
    for (int o = 0; o < program_.num_outputs; ++o) {
      expected_.emplace_back(data_[program_.num_inputs + o].size());
      outputs.push_back(expected_.back().data());
    }
    t.reference(w, inputs, outputs);
  }

  // Runs every stage or, with `timed_only`, only the timed ones on the workspace that an earlier
  // full run left (the outputs are reset to NaN first). Returns the largest over the outputs of
  // max |output - reference| / max |reference|; an interpreter error fails the test and gives
  // infinity.
  double relative_error(bool timed_only = false) {
    ir::Program p = program_;
    if (timed_only) std::erase_if(p.stages, [](const ir::Stage& s) { return !s.timed; });
    for (int o = 0; o < p.num_outputs; ++o) {
      std::vector<float>& out = data_[p.num_inputs + o];
      std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
    }
    std::vector<float*> ptrs;
    for (auto& d : data_) ptrs.push_back(d.data());
    Status s = ir::interpret(p, ptrs);
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok()) return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (int o = 0; o < p.num_outputs; ++o) {
      const std::vector<float>& got = data_[p.num_inputs + o];
      double max_ref = 0, max_err = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        max_ref = std::max(max_ref, std::abs(static_cast<double>(expected_[o][i])));
        double err = std::abs(static_cast<double>(got[i]) - expected_[o][i]);
        max_err =
            std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(max_err, err);
      }
      worst = std::max(worst, max_err / std::max(max_ref, 1e-30));
    }
    return worst;
  }

 private:
  ir::Program program_;
  std::vector<std::vector<float>> data_;      // one per program buffer
  std::vector<std::vector<float>> expected_;  // one per output
};

// `program` takes the template's tensors as arguments and computes the reference (relative error
// at most 1e-4) with all its stages and, when it has untimed stages, with the timed ones alone on
// the workspace the untimed ones prepared.
inline ::testing::AssertionResult ComputesReference(const Template& t, const Workload& w,
                                                    const ir::Program& program, uint64_t seed) {
  std::vector<TensorSpec> tensors = t.inputs(w), outs = t.outputs(w);
  if (program.num_inputs != static_cast<int>(tensors.size()) ||
      program.num_outputs != static_cast<int>(outs.size())) {
    return ::testing::AssertionFailure() << "argument counts differ from the template's";
  }
  tensors.insert(tensors.end(), outs.begin(), outs.end());
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (program.buffers[i]->shape != tensors[i].shape) {
      return ::testing::AssertionFailure() << "buffer " << i << " has the wrong shape";
    }
  }
  ReferenceRun run(t, w, program, seed);
  const double all_stages = run.relative_error();
  if (!(all_stages <= 1e-4)) {
    return ::testing::AssertionFailure() << "relative error " << all_stages;
  }
  const bool has_untimed = std::any_of(program.stages.begin(), program.stages.end(),
                                       [](const ir::Stage& s) { return !s.timed; });
  if (has_untimed) {
    const double timed_only = run.relative_error(/*timed_only=*/true);
    if (!(timed_only <= 1e-4)) {
      return ::testing::AssertionFailure() << "timed stages: relative error " << timed_only;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace kiln::ops
