// kiln's own record log: one JSON object per line holding every Record field, for backups and
// moving records between stores without loss (TVM's format drops error messages, FLOP counts,
// provenance and kiln's workload text). Field order is fixed:
//   {"kiln_record": 1, "id": 7, "target": "llvm -mcpu=znver5", "task_name": "dense_pack.x86",
//    "workload": "dense:K=512,M=1,N=1000", "config_index": 68, "entities": [...],
//    "error_no": 0, "costs": [2.1e-05], "all_cost": 0.84, "timestamp": 1700000000.0,
//    "error_msg": "", "flop": 1024000.0, "source": "kiln tune",
//    "measure_options": {"number": 4, ...}, "runner_lost": false, "measure_version": 2}
// "kiln_record" is the format version (and the marker that tells the line from a TVM one).
// "measure_options" (an object, null when unknown), "runner_lost" and "measure_version"
// (Record::measure_version) were added within version 1 and are optional on reading: older lines
// have unknown options and were measured under measurement version 1, and an older kiln ignores
// them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/record.h"
#include "store/formats/tvm_log.h"  // ImportedLine

namespace kiln::store {

inline constexpr int kKilnRecordVersion = 1;

// The record as one kiln log line (no trailing newline). Errors: a non-finite number.
Result<std::string> to_kiln_line(const Record& record);

// Reads one kiln log line. Every field but "id" is required and type-checked; the task must be
// one of kiln's templates, the target one it runs on (check_target_for_task), a success's costs
// positive and finite, the workload valid for it (stored normalized) and the entities a
// config of its space (a differing config_index is a warning, as for TVM lines). The line's "id"
// is ignored (the store assigns ids); its "source" is kept. "measure_options", "runner_lost" and
// "measure_version" are optional (see above); present, they are type-checked, and a measurement
// version above this kiln's is an error.
Result<ImportedLine> parse_kiln_line(std::string_view line);
// Same, for a line already parsed as JSON.
Result<ImportedLine> parse_kiln_json(const nlohmann::json& row);

}  // namespace kiln::store
