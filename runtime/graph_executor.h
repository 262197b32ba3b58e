// Runs a compiled model, in the spirit of TVM's graph module: load, set_input, run, get_output.
//
// Storage: inputs and outputs have their own buffers; constants live in the artifact's blob;
// intermediates share one arena, planned once at load by liveness over the steps (a value's
// bytes are reused once its last reader has run); views resolve to the storage of the value
// they view. Steps run in order on a thread pool of `threads` threads (the kernels' parallel
// loops split across it).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "runtime/model_artifact.h"

namespace kiln {

class ThreadPool;
class Artifact;

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  int64_t num_elements() const;
};

class GraphExecutor {
 public:
  // Checks the CPU features, loads the shared object, resolves every step's symbol and plans
  // memory. Errors name the artifact (its label) and the problem.
  static Result<std::unique_ptr<GraphExecutor>> create(ModelArtifact model, int threads = 1);
  ~GraphExecutor();

  int num_inputs() const;
  int num_outputs() const;
  const TensorInfo& input_info(int i) const;
  const TensorInfo& output_info(int i) const;

  // Copies `data` into input `name`; kInvalidArgument for an unknown name or a size that is
  // not the input's element count.
  Status set_input(const std::string& name, std::span<const float> data);
  void run();
  std::span<const float> get_output(int i) const;  // valid until the next run()

  void set_threads(int threads);
  int threads() const;
  // Bytes of the intermediate arena (after liveness planning) and what it would be without reuse.
  int64_t arena_bytes() const;
  int64_t unplanned_bytes() const;
  const ModelArtifact& model() const;

 private:
  GraphExecutor();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
