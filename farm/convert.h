// Conversions between the wire messages of proto/kiln.proto and kiln's exchange types, at the
// edge of every farm service (gRPC's route_guide style: handlers convert, the core computes).
//
// Every from_proto validates what it reads: a malformed message is kInvalidArgument and the
// message names the field at fault ("MeasureOptions.repeat: must be at least 1, got 0"), so a
// bad RPC is an error reply, never a crash or an unchecked value inside kiln. The one exception
// follows the Builder contract: entities that are well-formed JSON but no config of the task's
// space are kInstantiation (AutoTVM's INSTANTIATION_ERROR), a result rather than a bad request.
//
// This library links neither LLVM nor lld (tests/farm/CMakeLists.txt checks that).
#pragma once

#include <cstdint>
#include <string>

#include "common/measure_error.h"
#include "common/status.h"
#include "exchange/build_result.h"
#include "exchange/measure_input.h"
#include "exchange/measure_result.h"
#include "exchange/space_cache.h"
#include "exchange/target.h"
#include "exchange/task.h"
#include "proto/kiln.pb.h"
#include "runtime/time_evaluator.h"

namespace kiln::farm {

// How to build and measure, as a farm client sends it with each batch (MeasureOptions in
// proto/kiln.proto). Defaults are AutoTVM's LocalRunner's, as runner::RunnerOptions has them.
struct MeasureOptions {
  TimeOptions time;  // number, repeat, min_repeat_ms, enable_cpu_cache_flush
  uint64_t input_seed = 0;
  double tolerance = 1e-4;
  double timeout_s = 10;
  double cooldown_interval_s = 0.1;
  int threads = 0;  // 0: one per hardware thread
  double build_timeout_s = 10;

  bool operator==(const MeasureOptions& o) const;
};

// What a runner offers the farm (RunnerCapabilities in proto/kiln.proto).
struct RunnerCapabilities {
  std::string key;      // device kind, e.g. znver5-2c
  std::string name;     // unique runner name
  std::string address;  // host:port of its Runner service
  Target target;
  int cores = 1;
  std::string kiln_version;

  bool operator==(const RunnerCapabilities&) const = default;
};

// A key or runner name: 1..64 characters of [A-Za-z0-9._-]. Errors name `field`.
Status check_name(const std::string& field, const std::string& value);

v1::Target to_proto(const Target& t);
Result<Target> from_proto(const v1::Target& p, const std::string& field = "Target");

v1::Task to_proto(const Task& t);
// The template must be registered and the workload normalized by it (as Task::decode).
Result<Task> from_proto(const v1::Task& p, const std::string& field = "Task");

v1::ConfigEntity to_proto(const ConfigEntity& c);

v1::MeasureInput to_proto(const MeasureInput& in);
// Rebuilds the config from its entities in the task's space (from `spaces`); the index sent
// must agree with them.
Result<MeasureInput> from_proto(const v1::MeasureInput& p, ConfigSpaceCache& spaces,
                                const std::string& field = "MeasureInput");

v1::MeasureOptions to_proto(const MeasureOptions& o);
Result<MeasureOptions> from_proto(const v1::MeasureOptions& p,
                                  const std::string& field = "MeasureOptions");

v1::BuildResult to_proto(const BuildResult& b);
// Checks the fields' shapes (error code, digest format, manifest consistency), not that the
// artifact hashes to the digest: a runner calls BuildResult::verify_digest before loading it.
Result<BuildResult> from_proto(const v1::BuildResult& p, const std::string& field = "BuildResult");

v1::MeasureResult to_proto(const MeasureResult& m);
Result<MeasureResult> from_proto(const v1::MeasureResult& p,
                                 const std::string& field = "MeasureResult");

v1::RunnerCapabilities to_proto(const RunnerCapabilities& c);
Result<RunnerCapabilities> from_proto(const v1::RunnerCapabilities& p,
                                      const std::string& field = "RunnerCapabilities");

// AutoTVM's error number on the wire, or kInvalidArgument naming `field` for one out of range.
Result<MeasureError> measure_error_from_proto(int value, const std::string& field);

}  // namespace kiln::farm
