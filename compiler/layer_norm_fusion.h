// Graph pass: LayerNormalization written out as its arithmetic, as exporters emit it below ONNX
// opset 17 (PyTorch's nn.LayerNorm):
//   mean = ReduceMean(x, last axis)   d = Sub(x, mean)   v = ReduceMean(Pow(d, 2), last axis)
//   y = Add(Mul(Div(d, Sqrt(Add(v, eps))), Scale), B)
// becomes one LayerNormalization(x, Scale, B, axis -1, epsilon eps) node again, which compiles to
// one kernel (compiler/lower_layernorm.cc) where the nine nodes took six, as ONNX Runtime's
// LayerNormFusion does. A match needs every intermediate to feed the pattern alone and not be a
// graph output, both means to keep the last axis as a dimension, and eps, the exponent 2, Scale
// and B to be float32 constants (Scale and B one value per element of the last axis).
#pragma once

#include "frontend/graph.h"

namespace kiln::compiler {

// Rewrites `graph` in place; returns how many nodes the rewrite removed (8 per match).
int fuse_layer_norms(frontend::Graph* graph);

}  // namespace kiln::compiler
