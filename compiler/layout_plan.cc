#include "compiler/layout_plan.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ops/conv_common.h"

namespace kiln::compiler {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kMaxRefinementSweeps = 50;

// The block the consumer reads the edge's tensor in under its candidate `c`.
int64_t read_block(const PlanEdge& e, const PlanCandidate& c) {
  return e.use == EdgeUse::kData ? c.in_block : c.out_block;
}

// Whether the consumer reads the producer's output as it is, with no transform: in its own
// block, or (a conv reading its data in place) in a block of several of its chunks.
bool read_as_is(const PlanEdge& e, int64_t from, int64_t to) {
  if (from == to) return true;
  return e.use == EdgeUse::kData && e.in_place &&
         ops::conv::reads_chunks_in_place(from, to, e.own_chunks);
}

// Transform seconds on `e` with the producer at candidate cp and the consumer at cc.
double edge_cost(const std::vector<PlanNode>& nodes, const PlanEdge& e, const TransformCost& cost,
                 int cp, int cc) {
  int64_t from = nodes[e.producer].candidates[cp].out_block;
  int64_t to = read_block(e, nodes[e.consumer].candidates[cc]);
  if (read_as_is(e, from, to)) return 0;
  // A mismatched epilogue read goes through a copy of the producer's output in the block the
  // consumer writes (an NCHW copy where either side is NCHW).
  if (e.use == EdgeUse::kEpilogue) return cost(e.shape, from, from > 0 ? to : 0, true);
  return cost(e.shape, from, to, e.in_place);
}

bool blocks_differ(const std::vector<PlanNode>& nodes, const PlanEdge& e,
                   const std::vector<int>& choice) {
  return !read_as_is(e, nodes[e.producer].candidates[choice[e.producer]].out_block,
                     read_block(e, nodes[e.consumer].candidates[choice[e.consumer]]));
}

}  // namespace

LayoutPlan evaluate_plan(const std::vector<PlanNode>& nodes, const std::vector<PlanEdge>& edges,
                         const TransformCost& cost, std::vector<int> choice) {
  LayoutPlan plan;
  plan.choice = std::move(choice);
  for (size_t v = 0; v < nodes.size(); ++v) {
    plan.kernel_seconds += nodes[v].candidates[plan.choice[v]].seconds;
  }
  for (const PlanEdge& e : edges) {
    if (!blocks_differ(nodes, e, plan.choice)) continue;
    ++plan.transforms;
    plan.transform_seconds +=
        edge_cost(nodes, e, cost, plan.choice[e.producer], plan.choice[e.consumer]);
  }
  return plan;
}

Result<LayoutPlan> plan_layouts(const std::vector<PlanNode>& nodes,
                                const std::vector<PlanEdge>& edges, const TransformCost& cost) {
  const int n = static_cast<int>(nodes.size());
  for (int v = 0; v < n; ++v) {
    if (nodes[v].candidates.empty()) {
      return InvalidArgument("layout plan: node " + std::to_string(v) + " has no candidate config");
    }
  }
  std::vector<std::vector<int>> in_edges(n), out_edges(n);
  for (size_t i = 0; i < edges.size(); ++i) {
    const PlanEdge& e = edges[i];
    if (e.producer < 0 || e.consumer >= n || e.producer >= e.consumer) {
      return InvalidArgument("layout plan: edge " + std::to_string(i) + " (" +
                             std::to_string(e.producer) + " -> " + std::to_string(e.consumer) +
                             ") does not go forward between the " + std::to_string(n) + " nodes");
    }
    in_edges[e.consumer].push_back(static_cast<int>(i));
    out_edges[e.producer].push_back(static_cast<int>(i));
  }

  // 1. Forward: the cheapest way to reach each candidate, upstream costs shared at fan-outs.
  std::vector<std::vector<double>> forward(n);
  for (int v = 0; v < n; ++v) {
    const auto& cands = nodes[v].candidates;
    forward[v].resize(cands.size());
    for (size_t c = 0; c < cands.size(); ++c) {
      double total = cands[c].seconds;
      for (int ei : in_edges[v]) {
        const PlanEdge& e = edges[ei];
        double share = 1.0 / static_cast<double>(out_edges[e.producer].size());
        double best = kInfinity;
        for (size_t cp = 0; cp < nodes[e.producer].candidates.size(); ++cp) {
          best = std::min(best,
                          forward[e.producer][cp] * share +
                              edge_cost(nodes, e, cost, static_cast<int>(cp), static_cast<int>(c)));
        }
        total += best;
      }
      forward[v][c] = total;
    }
  }

  // 2. Backward: each node given its consumers' choices.
  std::vector<int> choice(n, 0);
  for (int v = n - 1; v >= 0; --v) {
    double best = kInfinity;
    for (size_t c = 0; c < nodes[v].candidates.size(); ++c) {
      double total = forward[v][c];
      for (int ei : out_edges[v]) {
        total += edge_cost(nodes, edges[ei], cost, static_cast<int>(c), choice[edges[ei].consumer]);
      }
      if (total < best) {
        best = total;
        choice[v] = static_cast<int>(c);
      }
    }
  }

  // 3. Local refinement: one node at a time, the others fixed; from the backtracked choice and
  // from each node's fastest kernel (so the plan is never worse than ignoring layouts).
  auto refine = [&](std::vector<int> choice) {
    auto local_cost = [&](int v, int c) {
      double total = nodes[v].candidates[c].seconds;
      for (int ei : in_edges[v]) {
        total += edge_cost(nodes, edges[ei], cost, choice[edges[ei].producer], c);
      }
      for (int ei : out_edges[v]) {
        total += edge_cost(nodes, edges[ei], cost, c, choice[edges[ei].consumer]);
      }
      return total;
    };
    for (int sweep = 0; sweep < kMaxRefinementSweeps; ++sweep) {
      bool changed = false;
      for (int v = 0; v < n; ++v) {
        double current = local_cost(v, choice[v]);
        for (size_t c = 0; c < nodes[v].candidates.size(); ++c) {
          double candidate = local_cost(v, static_cast<int>(c));
          // A strict improvement beyond rounding: the total decreases, so the sweeps end.
          if (candidate < current * (1 - 1e-12)) {
            current = candidate;
            choice[v] = static_cast<int>(c);
            changed = true;
          }
        }
      }
      if (!changed) break;
    }
    return evaluate_plan(nodes, edges, cost, std::move(choice));
  };
  std::vector<int> fastest(n, 0);
  for (int v = 0; v < n; ++v) {
    for (size_t c = 0; c < nodes[v].candidates.size(); ++c) {
      if (nodes[v].candidates[c].seconds < nodes[v].candidates[fastest[v]].seconds) {
        fastest[v] = static_cast<int>(c);
      }
    }
  }
  LayoutPlan planned = refine(std::move(choice));
  LayoutPlan greedy = refine(std::move(fastest));
  return greedy.total_seconds() < planned.total_seconds() ? greedy : planned;
}

}  // namespace kiln::compiler
