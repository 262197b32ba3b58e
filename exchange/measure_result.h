// MeasureResult: the outcome of one trial (DESIGN.md "Contracts"), what a runner returns for a
// MeasureInput and its BuildResult and what the tuning loop turns into a record: the costs of a
// checked kernel, or the error (AutoTVM's MeasureErrorNo) and why.
#pragma once

#include <string>
#include <vector>

#include "common/measure_error.h"
#include "common/status.h"
#include "common/wire.h"
#include "exchange/build_result.h"

namespace kiln {

struct MeasureResult {
  MeasureError error = MeasureError::kNoError;
  std::string message;        // why it failed; empty on success
  std::vector<double> costs;  // seconds per run, after AutoTVM's drop-min/max rule
  double relative_error = 0;  // of the checked output
  double build_seconds = 0;
  double run_seconds = 0;  // loading + checking + timing wall time
  double timestamp = 0;    // unix seconds when the result was produced
  // With kRuntimeDevice: the runner (its process or device) was lost before the kernel could
  // run, so the failure says nothing about the config and measuring it again may succeed. A
  // kernel that crashes is the config's fault: false.
  bool runner_lost = false;
  // Measured on an emulator (a runner started with --emulated, e.g. qemu for a board): the
  // output was checked, but the costs are one emulated run, not the device's speed. Set by the
  // runner service for its client; not part of the runner's wire frame to its children.
  bool emulated = false;

  // A failure stamped now (timestamp), with no costs.
  static MeasureResult failure(MeasureError error, std::string message);
  // The result of a trial whose build failed: the build's error, message and time. REQUIRES
  // build.error != kNoError.
  static MeasureResult of_failed_build(const BuildResult& build);

  void encode(wire::Writer& w) const;
  // Errors (kInvalidArgument) say the frame is truncated or holds an unknown error code.
  static Result<MeasureResult> decode(wire::Reader& r);

  bool operator==(const MeasureResult&) const = default;
};

// Unix time in seconds, as MeasureResult::timestamp holds it.
double unix_seconds_now();

}  // namespace kiln
