// One measurement of one config of one task: the unit the record store keeps and the log formats
// (kiln's JSON lines, TVM's autotvm log v0.2) carry. Plain data; no invariants are enforced here
// (RecordStore::append checks them, see validate_record).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/measure_error.h"
#include "common/status.h"

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

  // mean(costs), or +inf when error_no != 0 or there are no costs. AutoTVM ranks configs by it.
  double mean_cost() const;
  // flop / mean_cost() in FLOP/s: the throughput tuners learn from; 0 for a failed record or one
  // whose cost is not a positive finite number.
  double flops() const;

  bool operator==(const Record&) const = default;
};

// Checks what the store requires of a record before it is appended: non-empty UTF-8 target, task
// name and workload; entities a JSON array (of UTF-8 strings and finite numbers); error_no in 0..8;
// config_index >= 0; finite non-negative numbers; costs non-empty when error_no == 0 and empty
// otherwise. The error says which field.
Status validate_record(const Record& record);

}  // namespace kiln::store
