// The layout planner (compiler/layout_plan.h) on small synthetic graphs, against brute force, and
// the measured transform costs (compiler/transform_costs.h) on this machine.
#include "compiler/layout_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "builder/target.h"
#include "compiler/transform_costs.h"

namespace kiln::compiler {
namespace {

const std::vector<int64_t> kShape = {1, 32, 8, 8};

TransformCost flat_cost(double seconds) {
  return [seconds](const std::vector<int64_t>&, int64_t, int64_t, bool) { return seconds; };
}

std::vector<PlanEdge> chain_edges(int n) {
  std::vector<PlanEdge> edges;
  for (int v = 0; v + 1 < n; ++v) edges.push_back({v, v + 1, EdgeUse::kData, kShape});
  return edges;
}

// The cheapest total over every assignment of candidates.
double brute_force(const std::vector<PlanNode>& nodes, const std::vector<PlanEdge>& edges,
                   const TransformCost& cost) {
  std::vector<int> choice(nodes.size(), 0);
  double best = 1e300;
  std::function<void(size_t)> visit = [&](size_t v) {
    if (v == nodes.size()) {
      best = std::min(best, evaluate_plan(nodes, edges, cost, choice).total_seconds());
      return;
    }
    for (size_t c = 0; c < nodes[v].candidates.size(); ++c) {
      choice[v] = static_cast<int>(c);
      visit(v + 1);
    }
  };
  visit(0);
  return best;
}

// Per node, the fastest kernel: what compiling each conv with its best record does.
std::vector<int> per_node_best(const std::vector<PlanNode>& nodes) {
  std::vector<int> choice;
  for (const PlanNode& n : nodes) {
    int best = 0;
    for (size_t c = 0; c < n.candidates.size(); ++c) {
      if (n.candidates[c].seconds < n.candidates[best].seconds) best = static_cast<int>(c);
    }
    choice.push_back(best);
  }
  return choice;
}

// A chain whose per-node best configs alternate between blocks 16 and 8.
std::vector<PlanNode> mismatched_chain() {
  return {
      {{{0, 16, 1.00}, {0, 8, 1.10}}},
      {{{8, 8, 1.00}, {16, 16, 1.20}}},
      {{{16, 16, 1.00}, {8, 8, 1.05}}},
  };
}

TEST(LayoutPlan, ExpensiveTransformsMakeTheChainKeepOneBlock) {
  std::vector<PlanNode> nodes = mismatched_chain();
  std::vector<PlanEdge> edges = chain_edges(3);
  TransformCost cost = flat_cost(1.0);
  // Each conv's own best: 16 -> 8 -> 16, two transforms.
  LayoutPlan greedy = evaluate_plan(nodes, edges, cost, per_node_best(nodes));
  EXPECT_EQ(greedy.transforms, 2);
  EXPECT_DOUBLE_EQ(greedy.total_seconds(), 5.0);

  Result<LayoutPlan> plan = plan_layouts(nodes, edges, cost);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // Block 8 throughout (1.10 + 1.00 + 1.05) beats block 16 throughout (1.00 + 1.20 + 1.00).
  EXPECT_EQ(plan->choice, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(plan->transforms, 0);
  EXPECT_NEAR(plan->total_seconds(), 3.15, 1e-12);
  EXPECT_NEAR(plan->kernel_seconds, 3.15, 1e-12);
  EXPECT_DOUBLE_EQ(plan->transform_seconds, 0);
}

TEST(LayoutPlan, ACheapTransformIsWorthTheFasterKernels) {
  std::vector<PlanNode> nodes = mismatched_chain();
  std::vector<PlanEdge> edges = chain_edges(3);
  Result<LayoutPlan> plan = plan_layouts(nodes, edges, flat_cost(0.01));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->choice, per_node_best(nodes));
  EXPECT_EQ(plan->transforms, 2);
  EXPECT_NEAR(plan->total_seconds(), 3.02, 1e-12);

  // A faster kernel in another block wins when its gain (0.3) exceeds the conversion (0.15).
  std::vector<PlanNode> two = {{{{0, 16, 1.0}}}, {{{16, 16, 1.3}, {8, 8, 1.0}}}};
  plan = plan_layouts(two, chain_edges(2), flat_cost(0.15));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->choice, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan->transforms, 1);
  EXPECT_NEAR(plan->total_seconds(), 2.15, 1e-12);
}

TEST(LayoutPlan, ExactOnRandomChains) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> seconds(0.5, 2.0);
  const int64_t blocks[] = {4, 8, 16};
  for (int trial = 0; trial < 200; ++trial) {
    int n = 2 + static_cast<int>(rng() % 5);
    std::vector<PlanNode> nodes(n);
    for (PlanNode& node : nodes) {
      int k = 1 + static_cast<int>(rng() % 4);
      for (int c = 0; c < k; ++c) {
        node.candidates.push_back({blocks[rng() % 3], blocks[rng() % 3], seconds(rng)});
      }
    }
    // The cost depends on the blocks, as the measured one does.
    TransformCost cost = [](const std::vector<int64_t>&, int64_t from, int64_t to, bool) {
      return 0.1 * static_cast<double>(from + to) / 8;
    };
    std::vector<PlanEdge> edges = chain_edges(n);
    Result<LayoutPlan> plan = plan_layouts(nodes, edges, cost);
    ASSERT_TRUE(plan.ok());
    EXPECT_NEAR(plan->total_seconds(), brute_force(nodes, edges, cost), 1e-9) << "trial " << trial;
  }
}

// ResNet's block: conv a feeds conv b (data) and is read again by conv c's residual Add
// (epilogue, in c's output block), and b feeds c.
TEST(LayoutPlan, ResidualBlockIsNoWorseThanPerNodeBestAndLocallyOptimal) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> seconds(0.5, 2.0);
  const int64_t blocks[] = {8, 16, 32};
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<PlanNode> nodes(4);
    for (PlanNode& node : nodes) {
      for (int c = 0; c < 3; ++c) {
        node.candidates.push_back({blocks[rng() % 3], blocks[rng() % 3], seconds(rng)});
      }
    }
    std::vector<PlanEdge> edges = {{0, 1, EdgeUse::kData, kShape},
                                   {1, 2, EdgeUse::kData, kShape},
                                   {0, 2, EdgeUse::kEpilogue, kShape},
                                   {2, 3, EdgeUse::kData, kShape},
                                   {0, 3, EdgeUse::kData, kShape}};
    TransformCost cost = flat_cost(0.4);
    Result<LayoutPlan> plan = plan_layouts(nodes, edges, cost);
    ASSERT_TRUE(plan.ok());
    double total = plan->total_seconds();
    EXPECT_LE(total,
              evaluate_plan(nodes, edges, cost, per_node_best(nodes)).total_seconds() + 1e-12);
    EXPECT_GE(total, brute_force(nodes, edges, cost) - 1e-12);
    // No single node can switch and lower the total.
    for (size_t v = 0; v < nodes.size(); ++v) {
      for (size_t c = 0; c < nodes[v].candidates.size(); ++c) {
        std::vector<int> other = plan->choice;
        other[v] = static_cast<int>(c);
        EXPECT_GE(evaluate_plan(nodes, edges, cost, other).total_seconds(), total - 1e-12);
      }
    }
  }
}

TEST(LayoutPlan, AnEpilogueReadInAnotherBlockCostsAWholeCopyInTheBlockItWrites) {
  std::vector<PlanNode> nodes = {{{{0, 16, 1.0}}}, {{{16, 8, 1.0}}}};
  std::vector<PlanEdge> edges = {{0, 1, EdgeUse::kEpilogue, kShape}};
  std::vector<int64_t> asked;
  bool whole = false;
  TransformCost cost = [&](const std::vector<int64_t>& shape, int64_t from, int64_t to, bool w) {
    EXPECT_EQ(shape, kShape);
    asked = {from, to};
    whole = w;
    return 0.5;
  };
  Result<LayoutPlan> plan = plan_layouts(nodes, edges, cost);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->transforms, 1);
  EXPECT_EQ(asked, (std::vector<int64_t>{16, 8}));  // to the consumer's output block
  EXPECT_TRUE(whole);
  // A consumer writing NCHW (a ragged block) reads an NCHW copy.
  nodes[1].candidates[0].out_block = 0;
  plan = plan_layouts(nodes, edges, cost);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(asked, (std::vector<int64_t>{16, 0}));
}

TEST(LayoutPlan, BadGraphsAreErrorsNamingThePlace) {
  Result<LayoutPlan> plan = plan_layouts({{{{0, 8, 1.0}}}, {}}, {}, flat_cost(1));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("node 1 has no candidate"), std::string::npos);
  plan = plan_layouts({{{{0, 8, 1.0}}}, {{{8, 8, 1.0}}}}, {{1, 0, EdgeUse::kData, kShape}},
                      flat_cost(1));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("edge 0 (1 -> 0)"), std::string::npos);
}

TEST(TransformCosts, MeasuredOnThisMachineWithTheGeneratedKernels) {
  Result<TransformCosts> costs = TransformCosts::measure(builder::host_target());
  ASSERT_TRUE(costs.ok()) << costs.status().message();
  const std::vector<int64_t> small = {1, 48, 14, 14}, large = {1, 96, 112, 112};
  for (const std::vector<int64_t>& shape : {small, large}) {
    EXPECT_EQ(costs->seconds(shape, 16, 16), 0);
    // Runs of one channel cost more than runs of 8 beyond the matched copy; unpacking to NCHW
    // and packing from it cost something.
    EXPECT_GE(costs->seconds(shape, 16, 1), costs->seconds(shape, 16, 8));
    EXPECT_GT(costs->seconds(shape, 16, 0), 0);
    std::printf(
        "shape [%lld, %lld, %lld, %lld]: 16->1 %.2f us, 16->8 %.2f us, 0->16 %.2f us, "
        "16->0 %.2f us\n",
        (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)shape[3],
        costs->seconds(shape, 16, 1) * 1e6, costs->seconds(shape, 16, 8) * 1e6,
        costs->seconds(shape, 0, 16) * 1e6, costs->seconds(shape, 16, 0) * 1e6);
  }
  // Bigger tensors cost more.
  EXPECT_GT(costs->seconds(large, 16, 0), costs->seconds(small, 16, 0));
  // Into a conv that would read matched data in place, a conversion is a whole copy.
  for (const std::vector<int64_t>& shape : {small, large}) {
    EXPECT_GT(costs->seconds(shape, 16, 8, true), costs->seconds(shape, 16, 8, false));
    EXPECT_GT(costs->seconds(shape, 0, 16, true), costs->seconds(shape, 0, 16, false));
  }
  EXPECT_GT(TransformCosts::estimated().seconds(large, 16, 8, true),
            TransformCosts::estimated().seconds(large, 16, 8, false));
}

// The edge's in_place flag reaches the cost: a 1x1 conv reads matched data in place, so the
// conversion a mismatch needs is asked for whole.
TEST(LayoutPlan, AConversionIntoAnInPlaceReaderIsAskedForWhole) {
  std::vector<PlanNode> nodes = {{{{0, 16, 1.0}}}, {{{12, 12, 1.0}}}};
  std::vector<bool> asked;
  TransformCost cost = [&](const std::vector<int64_t>&, int64_t, int64_t, bool whole) {
    asked.push_back(whole);
    return 0.5;
  };
  for (bool in_place : {false, true}) {
    asked.clear();
    Result<LayoutPlan> plan = plan_layouts(nodes, {{0, 1, EdgeUse::kData, kShape, in_place}}, cost);
    ASSERT_TRUE(plan.ok());
    ASSERT_FALSE(asked.empty());
    for (bool whole : asked) EXPECT_EQ(whole, in_place);
  }
}

// A conv that reads its data in place reads a producer's block of several of its chunks as it
// is (32 -> 16, 48 -> 16; 16 -> 8 and 48 -> 8 where it reads its own chunks, a group or
// depthwise conv): no transform, no cost asked. One that packs its data converts, and so does
// any reader of a block that is not a multiple of its own (16 -> 32), and a reader of every
// chunk of chunks that are not whole cache lines (16 -> 8).
TEST(LayoutPlan, AnInPlaceReaderTakesABlockOfSeveralOfItsChunksAsItIs) {
  int asked = 0;
  TransformCost cost = [&](const std::vector<int64_t>&, int64_t, int64_t, bool) {
    ++asked;
    return 0.5;
  };
  struct Case {
    int64_t from, to;
    bool in_place, own_chunks;
    int transforms;
  };
  for (const Case& c :
       {Case{32, 16, true, false, 0}, Case{48, 16, true, false, 0}, Case{16, 8, true, true, 0},
        Case{48, 8, true, true, 0}, Case{32, 16, false, false, 1}, Case{16, 8, false, true, 1},
        Case{16, 32, true, true, 1}, Case{16, 8, true, false, 1}, Case{16, 0, true, true, 1},
        Case{0, 16, true, true, 1}}) {
    SCOPED_TRACE(std::to_string(c.from) + " -> " + std::to_string(c.to) +
                 (c.in_place ? " in place" : " packed") + (c.own_chunks ? ", own chunks" : ""));
    asked = 0;
    std::vector<PlanNode> nodes = {{{{0, c.from, 1.0}}}, {{{c.to, c.to, 1.0}}}};
    Result<LayoutPlan> plan =
        plan_layouts(nodes, {{0, 1, EdgeUse::kData, kShape, c.in_place, c.own_chunks}}, cost);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->transforms, c.transforms);
    EXPECT_DOUBLE_EQ(plan->transform_seconds, 0.5 * c.transforms);
    EXPECT_EQ(asked > 0, c.transforms > 0);
  }
}

}  // namespace
}  // namespace kiln::compiler
