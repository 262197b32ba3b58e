// The graph-level choice of conv configs (TVM's graph tuner): each conv kernel reads its data as
// NCHW[in_block]c and writes NCHW[out_block]c, both fixed by its config; where a producer's block
// differs from what its consumer reads, the data is converted (a layout transform, with a cost).
// plan_layouts picks one candidate config per node to minimise
//     sum of kernel times + sum of transform times
// over a DAG given in topological order.
//
// The algorithm, and where it is exact:
//   1. forward dynamic programming over candidates, as TVM's DPTuner: cost[v][c] = kernel(v, c) +
//      sum over v's in-edges (p -> v) of min over p's candidates cp of
//      (cost[p][cp] / out_degree(p) + transform(p cp -> v c)).
//      On a chain (and any in-tree) this is the exact optimum. Where a producer feeds several
//      consumers (ResNet's block input: the next conv, the downsample conv and the residual Add)
//      its upstream cost is shared between them (divided by the out-degree), which keeps the sum
//      over the sinks equal to the plan's cost when the consumers agree, but the consumers may
//      want different producer candidates: that is the approximation.
//   2. backtracking from the last node: each node takes the candidate minimising its forward cost
//      plus the transforms to the candidates already taken by its consumers (exactly the DP's
//      argmin on a chain; it resolves a fan-out's disagreement by the consumers' choices).
//   3. local refinement (iterated conditional modes): each node in turn switches to the candidate
//      minimising its kernel time plus the transforms on its edges, the others fixed, until no
//      switch lowers the total. The total never increases, so it stops, and on a chain it keeps
//      the optimum of step 1. The same refinement also starts from every node's fastest kernel,
//      and the cheaper of the two results is the plan: never worse than ignoring layouts, and a
//      local optimum (no single node can switch and lower the total).
// The cost reported is exact for the chosen candidates under the given kernel and transform
// costs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"

namespace kiln::compiler {

// One config a node may use: the blocks it reads and writes (0: NCHW) and its kernel time.
struct PlanCandidate {
  int64_t in_block = 0;
  int64_t out_block = 0;
  double seconds = 0;
};

struct PlanNode {
  std::vector<PlanCandidate> candidates;  // at least one
};

// How a consumer reads its producer's packed output.
enum class EdgeUse {
  kData,      // as the conv's data: converted from the producer's block to the consumer's in_block
  kEpilogue,  // in the consumer's fused epilogue (ResNet's residual Add), where the consumer
              // writes: read as it is when the producer's block is the consumer's out_block,
              // otherwise through a copy in that block (NCHW where either side is NCHW)
};

struct PlanEdge {
  int producer = 0;  // node indices, producer < consumer
  int consumer = 0;
  EdgeUse use = EdgeUse::kData;
  std::vector<int64_t> shape;  // the NCHW shape of the tensor that travels
  // The consumer reads data in its own block in place (no packing stage of its own: a conv
  // without padding, or one whose border tiles pad their windows), so a conversion on this kData
  // edge is a whole copy, not the extra a packing the consumer runs anyway takes over a plain
  // copy; and a producer block that is a multiple of the consumer's is read as it is where
  // ops::conv::reads_chunks_in_place allows, no conversion at all.
  bool in_place = false;
  // The consumer reads only its own chunks of the data (a group or depthwise conv): for
  // reads_chunks_in_place.
  bool own_chunks = false;
};

// Seconds to convert an NCHW-shaped tensor from NCHW[from]c to NCHW[to]c (0: plain NCHW); only
// asked for from != to. `whole`: the conversion is a copy of its own (PlanEdge::in_place), else
// only what it adds to the consumer's own packing counts.
using TransformCost =
    std::function<double(const std::vector<int64_t>& shape, int64_t from, int64_t to, bool whole)>;

struct LayoutPlan {
  std::vector<int> choice;  // per node, an index into its candidates
  double kernel_seconds = 0;
  double transform_seconds = 0;
  int transforms = 0;  // edges whose blocks differ
  double total_seconds() const { return kernel_seconds + transform_seconds; }
};

// The plan. InvalidArgument naming the node or edge when a node has no candidate or an edge
// does not go forward between existing nodes.
Result<LayoutPlan> plan_layouts(const std::vector<PlanNode>& nodes,
                                const std::vector<PlanEdge>& edges, const TransformCost& cost);

// The cost of `choice` (kernels, transforms, transform count) under the same model.
LayoutPlan evaluate_plan(const std::vector<PlanNode>& nodes, const std::vector<PlanEdge>& edges,
                         const TransformCost& cost, std::vector<int> choice);

}  // namespace kiln::compiler
