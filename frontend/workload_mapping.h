// Which nodes of a Graph are tunable, and as which kiln workload (ops/workload.h), following
// TVM's lowering of ONNX:
//   Conv, 4-D data:   groups 1 -> conv2d (N,C,H,W,K,R,S, stride_h/_w, pad_h/_w, dilation);
//                     groups == C == K -> depthwise_conv2d (N,C,H,W,R,S, stride, pad, dilation).
//   Gemm, MatMul:     B a constant of rank <= 2 -> dense (M = rows of A, all its leading
//                     dimensions flattened; N; K; bias=1 for a Gemm bias of N values, beta != 0);
//                     otherwise (two activations, or a batched weight) -> batch_matmul
//                     (B = the broadcast batch size, M, N, K).
// The workload is not normalized; each template normalizes it (ops/template.h).
#pragma once

#include <optional>

#include "common/status.h"
#include "frontend/graph.h"
#include "ops/workload.h"

namespace kiln::frontend {

// The node's workload; nullopt for a node with no tunable compute (Relu, Add, pooling, ...).
// An error for a Conv, Gemm or MatMul that kiln's workloads cannot express, saying why: a
// grouped convolution that is not depthwise, asymmetric padding that changes the output size,
// different dilations per axis, data that is not 4-D.
Result<std::optional<ops::Workload>> workload_of(const Graph& graph, const Node& node);

}  // namespace kiln::frontend
