// batch_matmul.x86: TVM's space and fallback, and for every sampled config a program that the
// interpreter runs to the reference's answer, or a reasoned InstantiationError.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codegen_limits.h"
#include "ir/analysis.h"
#include "ir/interpreter.h"
#include "ir/printer.h"
#include "ops/registry.h"

namespace kiln::ops {
namespace {

const TargetInfo kAvx512{16};

Workload normalized(const std::string& text) {
  auto w = Workload::parse(text);
  EXPECT_TRUE(w.ok()) << w.status().message();
  auto n = batch_matmul_template().normalize(*w);
  EXPECT_TRUE(n.ok()) << n.status().message();
  return *n;
}

std::vector<std::vector<int64_t>> split_sizes(const ConfigEntity& c) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& [name, e] : c.entities()) out.push_back(std::get<SplitEntity>(e).size);
  return out;
}

void walk(const ir::Stmt& s, const std::function<void(const ir::Stmt&)>& f) {
  if (!s.defined()) return;
  f(s);
  walk(s->body, f);
  walk(s->then_case, f);
  walk(s->else_case, f);
  for (const ir::Stmt& c : s->seq) walk(c, f);
}

// No vectorized loop loads with a stride other than 0 or 1 (no gathers) or nests control flow.
::testing::AssertionResult VectorLoopsAreSimd(const ir::Stmt& stage) {
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

// Interprets `program` on deterministic random inputs; compares with the reference.
::testing::AssertionResult ComputesReference(const Workload& w, const ir::Program& program,
                                             uint64_t seed) {
  const Template& t = batch_matmul_template();
  std::vector<TensorSpec> ins = t.inputs(w);
  TensorSpec out = t.outputs(w)[0];
  if (program.num_inputs != 2 || program.num_outputs != 1 ||
      program.buffers[0]->shape != ins[0].shape || program.buffers[1]->shape != ins[1].shape ||
      program.buffers[2]->shape != out.shape) {
    return ::testing::AssertionFailure() << "arguments differ from the template's tensors";
  }
  std::mt19937_64 rng(seed);
  std::vector<std::vector<float>> data;
  for (const ir::Buffer& b : program.buffers) {
    std::vector<float> v(b->num_elements(), std::nanf(""));
    if (data.size() < 2) {
      for (float& x : v) x = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53 * 2 - 1);
    }
    data.push_back(std::move(v));
  }
  std::vector<float> expected(out.num_elements());
  t.reference(w, {data[0].data(), data[1].data()}, {expected.data()});
  std::vector<float*> ptrs;
  for (auto& d : data) ptrs.push_back(d.data());
  Status st = ir::interpret(program, ptrs);
  if (!st.ok()) return ::testing::AssertionFailure() << st.message();
  double max_ref = 0, max_err = 0;
  for (size_t j = 0; j < expected.size(); ++j) {
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(expected[j])));
    double err = std::fabs(static_cast<double>(data[2][j]) - expected[j]);
    if (!(err <= max_err)) max_err = std::isnan(err) ? INFINITY : err;
  }
  if (max_err <= 1e-4 * max_ref) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max error " << max_err << " vs max |ref| " << max_ref;
}

TEST(BatchMatmulTest, SpaceMatchesTvm) {
  const Template& t = batch_matmul_template();
  EXPECT_EQ(t.name(), "batch_matmul.x86");
  ConfigSpace space = t.space(normalized("batch_matmul:B=12,M=128,N=128,K=64"));
  std::vector<std::string> names;
  for (const Knob& k : space.knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_y", "tile_x", "tile_k"}));
  EXPECT_EQ(space.dims(), (std::vector<int64_t>{8, 8, 7}));
  EXPECT_EQ(space.get(0 + 8 * 4 + 64 * 4).entity_string(),
            "[('tile_y', [-1, 1]), ('tile_x', [-1, 16]), ('tile_k', [-1, 16])]");
}

TEST(BatchMatmulTest, FallbackFollowsTvm) {
  const Template& t = batch_matmul_template();
  using Sizes = std::vector<std::vector<int64_t>>;
  struct Case {
    std::string workload;
    Sizes sizes;
  };
  for (const Case& c : std::vector<Case>{
           {"batch_matmul:B=12,M=128,N=128,K=64", {{-1, 8}, {-1, 8}, {-1, 16}}},
           {"batch_matmul:B=2,M=12,N=20,K=48", {{-1, 4}, {-1, 4}, {-1, 16}}},
           // TVM's [K // 16, 16] would leave a tail; the largest divisor <= 16 does not.
           {"batch_matmul:B=2,M=7,N=13,K=17", {{-1, 1}, {-1, 1}, {-1, 1}}},
           {"batch_matmul:B=1,M=6,N=8,K=24", {{-1, 2}, {-1, 8}, {-1, 12}}},
       }) {
    SCOPED_TRACE(c.workload);
    Workload w = normalized(c.workload);
    ConfigSpace space = t.space(w);
    ConfigEntity f = t.fallback(w, space, kAvx512);
    EXPECT_EQ(split_sizes(f), c.sizes);
    EXPECT_EQ(space.get(f.index()), f);
    auto p = t.instantiate(w, f, kAvx512);
    ASSERT_TRUE(p.ok()) << p.status().message();
    if (w.at("M") * w.at("N") * w.at("K") * w.at("B") <= 8192) {
      EXPECT_TRUE(ComputesReference(w, *p, 3));
    }
  }
}

TEST(BatchMatmulTest, SampledConfigsComputeTheReference) {
  const Template& t = batch_matmul_template();
  for (const char* text : {"batch_matmul:B=2,M=7,N=13,K=17", "batch_matmul:B=3,M=8,N=12,K=16",
                           "batch_matmul:B=1,M=1,N=5,K=4", "batch_matmul:B=2,M=16,N=16,K=12",
                           "batch_matmul:B=1,M=1,N=1,K=1"}) {
    Workload w = normalized(text);
    ConfigSpace space = t.space(w);
    std::mt19937_64 rng(7);
    int accepted = 0;
    for (int64_t i : space.sample_ints(60, rng)) {
      ConfigEntity c = space.get(i);
      SCOPED_TRACE(std::string(text) + " " + c.entity_string());
      auto p = t.instantiate(w, c, kAvx512);
      if (!p.ok()) {
        EXPECT_EQ(p.status().code(), StatusCode::kInstantiation);
        EXPECT_FALSE(p.status().message().empty());
        continue;
      }
      ++accepted;
      EXPECT_TRUE(ComputesReference(w, *p, i));
      for (const ir::Stage& s : p->stages) EXPECT_TRUE(VectorLoopsAreSimd(s.body));
      int64_t flops = 0;
      for (const ir::Stage& s : p->stages) flops += s.timed ? ir::count_flops(s.body) : 0;
      EXPECT_EQ(static_cast<double>(flops), t.flop(w));
    }
    EXPECT_GT(accepted, 0) << text;
  }
}

TEST(BatchMatmulTest, RegisterTileConfig) {
  const Template& t = batch_matmul_template();
  Workload w = normalized("batch_matmul:B=12,M=128,N=128,K=64");
  EXPECT_EQ(t.flop(w), 2.0 * 12 * 128 * 128 * 64);
  ConfigSpace space = t.space(w);
  auto c = space.make_config({{"tile_y", SplitEntity{{-1, 8}}},
                              {"tile_x", SplitEntity{{-1, 32}}},
                              {"tile_k", SplitEntity{{-1, 4}}}});
  ASSERT_TRUE(c.ok());
  auto p = t.instantiate(w, *c, kAvx512);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->buffers.back()->shape, (std::vector<int64_t>{12, 4, 64, 32}));
  EXPECT_EQ(p->buffers.back()->scope, ir::BufferScope::kWorkspace);
  for (const ir::Stage& s : p->stages) EXPECT_TRUE(s.timed) << s.name;

  auto unroll = space.make_config({{"tile_y", SplitEntity{{-1, 128}}},
                                   {"tile_x", SplitEntity{{-1, 128}}},
                                   {"tile_k", SplitEntity{{-1, 64}}}});
  ASSERT_TRUE(unroll.ok());
  // 64 k-steps of a 128 x 128 tile: TVM builds it; kiln computes the over-large accumulator
  // in sub-tiles and keeps the outer part of the unroll serial.
  auto realized = t.instantiate(w, *unroll, kAvx512);
  ASSERT_TRUE(realized.ok()) << realized.status().message();
  testing_util::ExpectWithinCodegenLimits(*realized, kAvx512, unroll->entity_string());
  EXPECT_FALSE(t.instantiate(w, ConfigEntity(0, {}), kAvx512).ok());
}

TEST(BatchMatmulTest, NormalizeAndTvmArgs) {
  const Template& t = batch_matmul_template();
  Workload w = normalized("batch_matmul:B=2,M=3,N=4,K=5");
  EXPECT_EQ(
      t.tvm_args(w).dump(),
      R"([["TENSOR",[2,3,5],"float32"],["TENSOR",[2,4,5],"float32"],[2,3,4],"float32",false,true])");
  EXPECT_EQ(t.inputs(w)[1].shape, (std::vector<int64_t>{2, 4, 5}));
  EXPECT_EQ(t.outputs(w)[0].shape, (std::vector<int64_t>{2, 3, 4}));
  for (const char* bad : {"batch_matmul:M=3,N=4,K=5", "batch_matmul:B=0,M=3,N=4,K=5",
                          "batch_matmul:B=1,M=3,N=4,K=5,bias=1", "dense:B=1,M=3,N=4,K=5"}) {
    auto r = t.normalize(*Workload::parse(bad));
    EXPECT_FALSE(r.ok()) << bad;
  }
}

}  // namespace
}  // namespace kiln::ops
