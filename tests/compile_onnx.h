// An ONNX model built in a test (tests/onnx_models.h), imported, compiled for this machine
// without a store and given an executor, for tests of compiler passes that check a compiled
// model's steps and what it computes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
#include "runtime/graph_executor.h"
#include "tests/onnx_models.h"

namespace kiln::testing {

struct CompiledOnnx {
  ModelArtifact artifact;
  std::unique_ptr<GraphExecutor> exec;
};

// `model` written to the temporary file `file`, imported and compiled; nullopt after a test
// failure that says which step failed.
inline std::optional<CompiledOnnx> compile_onnx(const OnnxModel& model, const std::string& file) {
  Result<frontend::Graph> graph = frontend::import_onnx(model.write(file));
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  if (!graph.ok()) return std::nullopt;
  Result<ModelArtifact> artifact = compiler::compile_model(*graph, {});
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return std::nullopt;
  auto exec = GraphExecutor::create(*artifact);
  EXPECT_TRUE(exec.ok()) << exec.status().message();
  if (!exec.ok()) return std::nullopt;
  return CompiledOnnx{std::move(artifact).value(), std::move(exec).value()};
}

// Runs `exec` once on `count` values drawn uniformly from [-1, 1) with `seed` as its input
// `input`, and returns them; a test failure says when the executor refuses the input.
inline std::vector<float> run_on_random_input(GraphExecutor& exec, const std::string& input,
                                              int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(count);
  for (float& v : x) v = u(rng);
  Status status = exec.set_input(input, x);
  EXPECT_TRUE(status.ok()) << status.message();
  exec.run();
  return x;
}

}  // namespace kiln::testing
