// TVM's autotvm JSON log, version 0.2 (autotvm.md §3): one record per line,
//   {"input": [target, task_name, args, {}], "config": {"index": i, "code_hash": null,
//    "entity": [[knob, tag, payload], ...]}, "result": [costs, error_no, all_cost, timestamp],
//    "version": 0.2, "tvm_version": "0.16.0"}
// written exactly as TVM's json.dumps does (store/formats/py_json.h), so kiln's lines are
// byte-identical to TVM's for the same measurement, and read back with every field checked.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/record.h"
#include "store/formats/tvm_target.h"

namespace kiln::store {

inline constexpr std::string_view kTvmVersion = "0.16.0";  // the TVM whose format kiln writes
inline constexpr double kTvmLogVersion = 0.2;              // AUTOTVM_LOG_VERSION
inline constexpr double kTvmFailedCost = 1e9;              // TVM's cost of a failed measurement

// A record read from a log line, with what the reader wants the user to know about it.
struct ImportedLine {
  Record record;  // id 0, source empty (the importer sets it)
  // Not errors, e.g. "config index 172 in the log, 173 from its entities in kiln's space".
  std::vector<std::string> warnings;
};

// The lower-level formatter: one TVM line from its parts. `config` is ConfigEntity::to_json()
// ({"index", "code_hash", "entity"} in that order). When error_no != 0 the costs are written as
// [1e9], as TVM does. The all_cost of a timeout (BUILD_TIMEOUT, RUN_TIMEOUT, and RUNTIME_DEVICE,
// which TVM's builder also uses for a dead worker) is TVM's timeout setting, an int: when it is a
// whole number it is written as one (`10`, not `10.0`). Errors: a non-finite number anywhere.
Result<std::string> format_tvm_line(std::string_view tvm_target, std::string_view task_name,
                                    const nlohmann::json& args,
                                    const nlohmann::ordered_json& config,
                                    const std::vector<double>& costs, int error_no, double all_cost,
                                    double timestamp, std::string_view tvm_version = kTvmVersion);

// The TVM args of a kiln (task, workload): Template::tvm_args of the normalized workload.
// Errors: unknown task name, bad workload.
Result<nlohmann::json> tvm_args_of(std::string_view task_name, std::string_view workload);

// A record as a TVM log line (no trailing newline): its target through tvm_target_string, its
// args from its template, code_hash null.
Result<std::string> to_tvm_line(const Record& record);
// Same, with the args already computed (tvm_args_of), for writing many records of one task.
Result<std::string> to_tvm_line(const Record& record, const nlohmann::json& args);

// Reads one TVM log line. Every field is checked; the error says which one is wrong and how:
// not JSON, a v0.1 row ({"i", "r", "v": 0.1}, which TVM itself no longer reads), a missing key, a
// wrong type, an unknown task name, a target the task's template does not run on (a cuda target
// on an x86 template), non-empty kwargs (kiln's tasks take none), args kiln cannot represent, an
// entity list that is not a config of the task's space, an error_no outside 0..8, a success
// whose costs are empty or not all positive and finite.
// The record's config index and entities come from the entity list (TVM's own reader rebuilds the
// config from the entities too): a different "index" in the line is a WARNING, because it means
// only that the index convenience differs, while the entities name the config exactly. Costs of a
// failed measurement (TVM's [1e9]) become an empty list; its error_msg says it came from TVM.
// Other costs on a failed measurement are dropped with a warning.
Result<ImportedLine> parse_tvm_line(std::string_view line);
// Same, for a line already parsed as JSON.
Result<ImportedLine> parse_tvm_json(const nlohmann::json& row);

}  // namespace kiln::store
