// Graph pass: BatchNormalization (inference) folded into the convolution that feeds it, at compile
// time: W'[k] = W[k] * s[k], b'[k] = (b[k] - mean[k]) * s[k] + beta[k], s = gamma / sqrt(var +
// eps), as every inference compiler does. Only when the conv's output feeds the BatchNormalization
// alone (and is not a graph output) and the weights and the four statistics are float32 constants.
#pragma once

#include "frontend/graph.h"

namespace kiln::compiler {

// Rewrites `graph` in place; returns how many BatchNormalization nodes were folded away.
int fold_batch_norms(frontend::Graph* graph);

}  // namespace kiln::compiler
