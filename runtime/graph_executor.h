// Runs a compiled model, in the spirit of TVM's graph module: load, set_input, run, get_output.
//
// Storage: inputs and outputs have their own buffers; constants live in the artifact's blob;
// intermediates share one arena, planned once at load by liveness over the steps (a value's
// bytes are reused once its last reader has run); views resolve to the storage of the value
// they view. Steps run in order on a thread pool of `threads` threads (the kernels' parallel
// loops split across it). An executor is used from one thread at a time.
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
  ModelDType dtype = ModelDType::kFloat32;
  int64_t num_elements() const;
};

class GraphExecutor {
 public:
  // Validates the model (validate_model), checks the CPU features, loads the shared object,
  // resolves every step's symbol and plans memory. Errors name the artifact (`label`, e.g. its
  // file name) and the problem: kInvalidArgument for an inconsistent model, a missing CPU
  // feature, a foreign target, an output no step writes, a step whose buffers do not cover what
  // its stage's code touches (the object's buffer table, kernel_abi.h), a truncated shared
  // object, or values needing more memory than the machine has; kRuntime for a shared object
  // the loader rejects or a step symbol it does not export.
  static Result<std::unique_ptr<GraphExecutor>> create(ModelArtifact model, int threads = 1,
                                                       std::string label = "model");
  ~GraphExecutor();

  int num_inputs() const;
  int num_outputs() const;
  const TensorInfo& input_info(int i) const;
  const TensorInfo& output_info(int i) const;

  // Copies `data` into input `name`; kInvalidArgument for an unknown name or a size that is
  // not the input's element count.
  Status set_input(const std::string& name, std::span<const float> data);
  // Runs every step in order, each with its buffers, on this executor's thread pool.
  void run();
  // run(), adding each step's wall time in seconds to (*step_seconds)[step] (resized to the
  // number of steps): TVM's debug executor, for finding the kernels that take the time.
  void run_profiled(std::vector<double>* step_seconds);
  // Output i's elements (the storage of the value it views, if it is a view); valid until the
  // next run() or until the executor is destroyed.
  std::span<const float> get_output(int i) const;          // REQUIRES: a float32 output
  std::span<const int64_t> get_output_int64(int i) const;  // REQUIRES: an int64 output

  void set_threads(int threads);
  int threads() const;
  // Bytes of the intermediate arena (after liveness planning) and what it would be without reuse.
  int64_t arena_bytes() const;
  int64_t unplanned_bytes() const;
  const ModelArtifact& model() const;
  // The intermediates' storage (arena_bytes() / 4 floats), for tests and debugging: its contents
  // before a run() must not change what run() computes.
  std::span<float> arena();

 private:
  GraphExecutor();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
