// One measurement of one config of one task: the unit the record store keeps and the log formats
// (kiln's JSON lines, TVM's autotvm log v0.2) carry. Plain data; no invariants are enforced here
// (Store::append checks them, see validate_record).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/measure_error.h"
#include "common/status.h"
#include "ops/measured_layout.h"

namespace kiln::store {

// AutoTVM's MeasureErrorNo (autotvm.md §3). The numbers are stored on disk and in TVM logs:
// do not change them.
// Record::error_no holds a MeasureError (common/measure_error.h) as its integer value.

// TVM's name of an error number ("RUNTIME_DEVICE"), or "INVALID" outside 0..8.
const char* error_no_name(int error_no);

struct Record {
  int64_t id = 0;             // assigned by the store (rowid), 0 before insertion
  std::string target;         // kiln target string, e.g. "llvm -mcpu=znver5"
  std::string task_name;      // TVM task name = template name, e.g. "dense_pack.x86"
  std::string workload;       // canonical kiln workload text (Workload::to_string, normalized)
  int64_t config_index = 0;   // index in the task's ConfigSpace (the entities are authoritative)
  nlohmann::json entities;    // TVM entity list [[knob, tag, payload], ...]
  int error_no = 0;           // MeasureErrorNo
  std::vector<double> costs;  // seconds per run; empty when error_no != 0
  double all_cost = 0;        // wall seconds spent on this trial (build + run)
  double timestamp = 0;       // unix seconds
  std::string error_msg;      // why it failed (empty on success)
  double flop = 0;            // the task's FLOP count (GFLOPS = flop / mean_cost() / 1e9)
  std::string source;         // who produced it: "kiln tune", "import:<file>", ...
  // The measure options the trial ran under, in canonical form (canonical_measure_options), or
  // empty when unknown (records from before schema version 2, imported TVM logs). Two trials
  // ran under the same options exactly when these strings are equal and non-empty.
  std::string measure_options;
  // The runner itself (its process or device) was lost, not the config's kernel: an
  // environmental RUNTIME_DEVICE (see is_environmental_failure). Only with RUNTIME_DEVICE.
  bool runner_lost = false;
  // The measurement semantics the trial ran under (ops/measured_layout.h: kMeasureVersion):
  // what program its costs time. Records of schema versions before 4 are version 1. A new
  // measurement, and an imported TVM log (whose semantics kiln now follows), is the current one.
  int measure_version = ops::kMeasureVersion;

  // mean(costs), or +inf when error_no != 0 or there are no costs. AutoTVM ranks configs by it.
  double mean_cost() const;
  // flop / mean_cost() in FLOP/s: the throughput tuners learn from; 0 for a failed record or one
  // whose cost is not a positive finite number.
  double flops() const;

  bool operator==(const Record&) const = default;
};

// The canonical text of a measure options object: compact JSON with keys sorted, so that
// equality of options is string equality. Errors: `options` is not an object, or holds
// something other than booleans, strings and finite numbers.
Result<std::string> canonical_measure_options(const nlohmann::json& options);

// Whether the record's failure came from the environment rather than its config, so that
// measuring it again under other conditions may succeed: BUILD_TIMEOUT and RUN_TIMEOUT always
// (a loaded machine or a short limit), RUNTIME_DEVICE only when runner_lost. A kernel that
// crashes, a wrong answer or a failed compile stay the config's fault.
bool is_environmental_failure(const Record& record);

// What an emulated record's measure_options hold (canonical JSON, so one spelling: the SQL of
// the stores searches for it too).
inline constexpr std::string_view kEmulatedMeasureOption = "\"emulated\":true";
// Whether the record was measured on an emulator (MeasureResult::emulated): its measure_options
// hold kEmulatedMeasureOption. Its output was checked; its costs are not the device's speed.
bool is_emulated(const Record& record);
// `measure_options` (canonical text, or empty) with "emulated":true added, still canonical.
std::string emulated_measure_options(const std::string& measure_options);

// Whether the record times the same program as a measurement made now of its task's configs
// (measure_version >= ops::oldest_comparable_version(task_name)) on the device itself (not
// is_emulated), so that it may be compared with new records: rank configs, resume tuning, train
// a cost model. Other records stay in the store and in full exports, but kiln never compares
// them with current ones.
bool is_comparable(const Record& record);

// Checks what the store requires of a record before it is appended: non-empty UTF-8 target, task
// name and workload; entities a JSON array (of UTF-8 strings and finite numbers); error_no in 0..8;
// config_index >= 0; finite non-negative numbers; costs non-empty when error_no == 0 and empty
// otherwise; measure_options empty or canonical (canonical_measure_options of itself);
// runner_lost only with RUNTIME_DEVICE; measure_version in 1..ops::kMeasureVersion (a higher one
// was measured by a newer kiln). The error says which field.
Status validate_record(const Record& record);

}  // namespace kiln::store
