// The plain fields of each farm message, listed once: X(proto field, member of kiln's struct),
// and the two copies generated from each list: copy_fields(struct, &proto) writes them for
// to_proto, copy_fields(proto, &struct) reads them for from_proto (after it has validated
// them). A field added to a message and its struct is one line here rather than two
// hand-copied assignments that can drift apart. Repeated, nested and enum fields are converted
// where the message is. Internal to farm/ (convert.cc, tracker_service.cc).
#pragma once

#include "farm/convert.h"
#include "farm/tracker.h"
#include "proto/kiln.pb.h"

#define KILN_TARGET_FIELDS(X)             \
  X(triple, triple)                       \
  X(cpu, cpu)                             \
  X(features, features)                   \
  X(explicit_features, explicit_features) \
  X(explicit_triple, explicit_triple)

#define KILN_MEASURE_OPTIONS_FIELDS(X)                   \
  X(number, time.number)                                 \
  X(repeat, time.repeat)                                 \
  X(min_repeat_ms, time.min_repeat_ms)                   \
  X(enable_cpu_cache_flush, time.enable_cpu_cache_flush) \
  X(input_seed, input_seed)                              \
  X(tolerance, tolerance)                                \
  X(timeout_s, timeout_s)                                \
  X(cooldown_interval_s, cooldown_interval_s)            \
  X(threads, threads)                                    \
  X(build_timeout_s, build_timeout_s)

#define KILN_BUILD_RESULT_FIELDS(X) \
  X(message, message)               \
  X(artifact, shared_object)        \
  X(sha256, artifact_sha256)        \
  X(build_seconds, build_seconds)

#define KILN_KERNEL_MANIFEST_FIELDS(X) \
  X(name, name)                        \
  X(num_inputs, num_inputs)            \
  X(num_outputs, num_outputs)

#define KILN_MEASURE_RESULT_FIELDS(X) \
  X(message, message)                 \
  X(relative_error, relative_error)   \
  X(build_seconds, build_seconds)     \
  X(run_seconds, run_seconds)         \
  X(timestamp, timestamp)             \
  X(runner_lost, runner_lost)         \
  X(emulated, emulated)

#define KILN_RUNNER_CAPABILITIES_FIELDS(X) \
  X(key, key)                              \
  X(name, name)                            \
  X(address, address)                      \
  X(cores, cores)                          \
  X(kiln_version, kiln_version)

#define KILN_KEY_STATUS_FIELDS(X) \
  X(key, key)                     \
  X(free, free)                   \
  X(busy, busy)                   \
  X(quarantined, quarantined)     \
  X(queued, queued)

#define KILN_RUNNER_STATUS_FIELDS(X)        \
  X(runner_id, runner_id)                   \
  X(trials, trials)                         \
  X(errors, errors)                         \
  X(consecutive_faults, consecutive_faults) \
  X(last_seen_s_ago, last_seen_s_ago)       \
  X(quarantine_reason, quarantine_reason)   \
  X(quarantine_left_s, quarantine_left_s)   \
  X(lease_client, lease_client)

namespace kiln::farm {

#define KILN_PROTO_SET(field, member) proto->set_##field(value.member);
#define KILN_PROTO_GET(field, member) value->member = proto.field();
#define KILN_FIELD_COPIES(Proto, Struct, LIST)                                        \
  inline void copy_fields(const Struct& value, Proto* proto) { LIST(KILN_PROTO_SET) } \
  inline void copy_fields(const Proto& proto, Struct* value) { LIST(KILN_PROTO_GET) }

KILN_FIELD_COPIES(v1::Target, Target, KILN_TARGET_FIELDS)
KILN_FIELD_COPIES(v1::MeasureOptions, MeasureOptions, KILN_MEASURE_OPTIONS_FIELDS)
KILN_FIELD_COPIES(v1::BuildResult, BuildResult, KILN_BUILD_RESULT_FIELDS)
KILN_FIELD_COPIES(v1::KernelManifest, KernelManifest, KILN_KERNEL_MANIFEST_FIELDS)
KILN_FIELD_COPIES(v1::MeasureResult, MeasureResult, KILN_MEASURE_RESULT_FIELDS)
KILN_FIELD_COPIES(v1::RunnerCapabilities, RunnerCapabilities, KILN_RUNNER_CAPABILITIES_FIELDS)
KILN_FIELD_COPIES(v1::KeyStatus, KeyReport, KILN_KEY_STATUS_FIELDS)
KILN_FIELD_COPIES(v1::RunnerStatus, RunnerReport, KILN_RUNNER_STATUS_FIELDS)

#undef KILN_FIELD_COPIES
#undef KILN_PROTO_GET
#undef KILN_PROTO_SET

}  // namespace kiln::farm
