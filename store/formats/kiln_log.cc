#include "store/formats/kiln_log.h"

#include "store/formats/line_parse.h"
#include "store/formats/py_json.h"
#include "store/formats/tvm_args.h"
#include "store/formats/tvm_target.h"

namespace kiln::store {

using nlohmann::json;
using nlohmann::ordered_json;

Result<std::string> to_kiln_line(const Record& r) {
  ordered_json row = ordered_json::object();
  row["kiln_record"] = kKilnRecordVersion;
  row["id"] = r.id;
  row["target"] = r.target;
  row["task_name"] = r.task_name;
  row["workload"] = r.workload;
  row["config_index"] = r.config_index;
  row["entities"] = ordered_json::parse(line::dump(r.entities), nullptr, false);
  row["error_no"] = r.error_no;
  row["costs"] = r.costs;
  row["all_cost"] = r.all_cost;
  row["timestamp"] = r.timestamp;
  row["error_msg"] = to_valid_utf8(r.error_msg);
  row["flop"] = r.flop;
  row["source"] = to_valid_utf8(r.source);
  // Sorted keys already: the canonical text parses back to the same canonical text.
  row["measure_options"] = r.measure_options.empty()
                               ? ordered_json(nullptr)
                               : ordered_json::parse(r.measure_options, nullptr, false);
  row["runner_lost"] = r.runner_lost;
  row["measure_version"] = r.measure_version;
  return py_json_dumps(row);
}

Result<ImportedLine> parse_kiln_json(const json& row) {
  KILN_ASSIGN_OR_RETURN(const json* version_json, line::field(row, "kiln_record", "the line"));
  KILN_ASSIGN_OR_RETURN(int64_t version, line::as_int(*version_json, "\"kiln_record\""));
  if (version != kKilnRecordVersion) {
    return InvalidArgument("kiln record format version " + std::to_string(version) +
                           " is not supported (this kiln reads version " +
                           std::to_string(kKilnRecordVersion) + ")");
  }
  ImportedLine out;
  Record& r = out.record;
  auto get = [&](const char* key) { return line::field(row, key, "the kiln record"); };
  auto text = [&](const char* key, std::string* into) -> Status {
    KILN_ASSIGN_OR_RETURN(const json* v, get(key));
    KILN_ASSIGN_OR_RETURN(*into, line::as_string(*v, std::string("\"") + key + "\""));
    return Status::Ok();
  };
  auto number = [&](const char* key, double* into) -> Status {
    KILN_ASSIGN_OR_RETURN(const json* v, get(key));
    KILN_ASSIGN_OR_RETURN(*into, line::as_number(*v, std::string("\"") + key + "\""));
    return Status::Ok();
  };
  KILN_RETURN_IF_ERROR(text("target", &r.target));
  KILN_RETURN_IF_ERROR(text("task_name", &r.task_name));
  std::string workload_text;
  KILN_RETURN_IF_ERROR(text("workload", &workload_text));
  KILN_ASSIGN_OR_RETURN(const json* index_json, get("config_index"));
  KILN_ASSIGN_OR_RETURN(int64_t logged_index, line::as_int(*index_json, "\"config_index\""));
  KILN_ASSIGN_OR_RETURN(const json* entities, get("entities"));
  KILN_ASSIGN_OR_RETURN(const json* error_json, get("error_no"));
  KILN_ASSIGN_OR_RETURN(int64_t error_no, line::as_int(*error_json, "\"error_no\""));
  KILN_ASSIGN_OR_RETURN(const json* costs_json, get("costs"));
  KILN_ASSIGN_OR_RETURN(r.costs, line::as_numbers(*costs_json, "\"costs\""));
  KILN_RETURN_IF_ERROR(number("all_cost", &r.all_cost));
  KILN_RETURN_IF_ERROR(number("timestamp", &r.timestamp));
  KILN_RETURN_IF_ERROR(text("error_msg", &r.error_msg));
  KILN_RETURN_IF_ERROR(number("flop", &r.flop));
  KILN_RETURN_IF_ERROR(text("source", &r.source));
  // Optional: lines written before kiln recorded them lack them (unknown options, runner kept).
  if (auto it = row.find("measure_options"); it != row.end() && !it->is_null()) {
    Result<std::string> canonical = canonical_measure_options(*it);
    if (!canonical.ok())
      return InvalidArgument("\"measure_options\": " + canonical.status().message());
    r.measure_options = *canonical;
  }
  if (auto it = row.find("runner_lost"); it != row.end()) {
    if (!it->is_boolean()) return InvalidArgument("\"runner_lost\" must be true or false");
    r.runner_lost = it->get<bool>();
  }
  // A line without it predates measurement versions: it was measured under version 1.
  r.measure_version = 1;
  if (auto it = row.find("measure_version"); it != row.end()) {
    KILN_ASSIGN_OR_RETURN(int64_t v, line::as_int(*it, "\"measure_version\""));
    if (v < 1 || v > ops::kMeasureVersion) {
      return InvalidArgument("\"measure_version\" " + std::to_string(v) +
                             (v > ops::kMeasureVersion
                                  ? " was measured by a newer kiln (this kiln measures version " +
                                        std::to_string(ops::kMeasureVersion) + ")"
                                  : " is not a measurement version"));
    }
    r.measure_version = static_cast<int>(v);
  }
  if (error_no < 0 || error_no > kMaxMeasureError) {
    return InvalidArgument("\"error_no\" " + std::to_string(error_no) +
                           " is not a MeasureErrorNo (0..8)");
  }
  r.error_no = static_cast<int>(error_no);

  KILN_ASSIGN_OR_RETURN(const ops::Template* tmpl, template_for_task(r.task_name));
  KILN_RETURN_IF_ERROR(check_target_for_task(r.target, r.task_name));
  if (r.error_no == static_cast<int>(MeasureError::kNoError)) {
    KILN_RETURN_IF_ERROR(line::check_success_costs(r.costs, "\"costs\""));
  }
  KILN_ASSIGN_OR_RETURN(ops::Workload workload, normalized_workload(*tmpl, workload_text));
  r.workload = workload.to_string();
  KILN_RETURN_IF_ERROR(
      line::resolve_config(*tmpl, workload, *entities, logged_index, &r, &out.warnings));
  KILN_RETURN_IF_ERROR(validate_record(r));
  return out;
}

Result<ImportedLine> parse_kiln_line(std::string_view text) {
  KILN_ASSIGN_OR_RETURN(json row, line::parse_json(text));
  return parse_kiln_json(row);
}

}  // namespace kiln::store
