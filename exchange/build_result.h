// BuildResult: what a builder hands a runner for one MeasureInput (DESIGN.md "Contracts"): the
// loadable artifact with its SHA-256 digest and the manifest a runner needs to call it, or the
// error that stopped the build (AutoTVM's MeasureErrorNo).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/measure_error.h"
#include "common/status.h"
#include "common/wire.h"
#include "ir/ir.h"

namespace kiln {

// What a runner needs to call an artifact: its buffers and stages (the Program minus its code).
struct KernelManifest {
  std::string name;
  std::vector<int64_t> buffer_elements;  // per program buffer: inputs, outputs, workspace
  // The shapes of the argument buffers (inputs, then outputs): their layouts, which may differ
  // from the template's tensors' (ops/measured_layout.h).
  std::vector<std::vector<int64_t>> argument_shapes;
  int num_inputs = 0;
  int num_outputs = 0;
  std::vector<std::string> stages;  // exported symbols, in execution order
  std::vector<bool> stage_timed;    // one per stage

  static KernelManifest of(const ir::Program& program);

  void encode(wire::Writer& w) const;
  static KernelManifest decode(wire::Reader& r);  // check r.ok() afterwards

  bool operator==(const KernelManifest&) const = default;
};

struct BuildResult {
  MeasureError error = MeasureError::kNoError;
  std::string message;          // why the build failed; empty on success
  std::string shared_object;    // the artifact (ELF .so bytes) on success
  std::string artifact_sha256;  // sha256_hex(shared_object) as the builder computed it
  KernelManifest manifest;
  double build_seconds = 0;

  // Succeeds when shared_object hashes to artifact_sha256 (which must be set). A runner checks
  // this before loading the artifact; the error (kRuntime) names the kernel and both digests.
  Status verify_digest() const;

  void encode(wire::Writer& w) const;
  // Errors (kInvalidArgument) say the frame is truncated or holds an unknown error code.
  static Result<BuildResult> decode(wire::Reader& r);

  bool operator==(const BuildResult&) const = default;
};

}  // namespace kiln
