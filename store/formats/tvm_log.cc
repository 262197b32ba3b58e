#include "store/formats/tvm_log.h"

#include <cmath>

#include "store/formats/line_parse.h"
#include "store/formats/py_json.h"
#include "store/formats/tvm_args.h"

namespace kiln::store {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// TVM's all_cost of a timeout (and of a builder process that died) is the builder's or runner's
// `timeout` setting itself, an int unless the user passed a float (measure_methods.py:
// MeasureResult(..., BUILD_TIMEOUT, self.timeout, time.time())), so json.dumps writes `10`, not
// `10.0`. Every other all_cost is a float, a difference of time.time() values.
ordered_json tvm_all_cost(int error_no, double all_cost) {
  bool from_timeout_setting = error_no == static_cast<int>(MeasureError::kBuildTimeout) ||
                              error_no == static_cast<int>(MeasureError::kRunTimeout) ||
                              error_no == static_cast<int>(MeasureError::kRuntimeDevice);
  constexpr double kExactIntLimit = 9007199254740992.0;  // 2^53: every integer below is exact
  if (from_timeout_setting && std::isfinite(all_cost) && std::abs(all_cost) < kExactIntLimit &&
      all_cost == std::floor(all_cost)) {
    return static_cast<int64_t>(all_cost);
  }
  return all_cost;
}

}  // namespace

Result<std::string> format_tvm_line(std::string_view tvm_target, std::string_view task_name,
                                    const json& args, const ordered_json& config,
                                    const std::vector<double>& costs, int error_no, double all_cost,
                                    double timestamp, std::string_view tvm_version) {
  // Build the line as an ordered object so the keys come out in TVM's order, then print it the
  // way Python does (nlohmann's own dump uses "," and ":" without spaces).
  ordered_json result_costs = ordered_json::array();
  if (error_no == static_cast<int>(MeasureError::kNoError)) {
    for (double c : costs) result_costs.push_back(c);
  } else {
    result_costs.push_back(kTvmFailedCost);
  }
  ordered_json row = ordered_json::object();
  row["input"] = ordered_json::array({std::string(tvm_target), std::string(task_name),
                                      ordered_json::parse(line::dump(args), nullptr, false),
                                      ordered_json::object()});
  row["config"] = config;
  row["result"] =
      ordered_json::array({result_costs, error_no, tvm_all_cost(error_no, all_cost), timestamp});
  row["version"] = kTvmLogVersion;
  row["tvm_version"] = std::string(tvm_version);
  return py_json_dumps(row);
}

Result<json> tvm_args_of(std::string_view task_name, std::string_view workload) {
  KILN_ASSIGN_OR_RETURN(const ops::Template* tmpl, template_for_task(task_name));
  KILN_ASSIGN_OR_RETURN(ops::Workload w, normalized_workload(*tmpl, workload));
  return tmpl->tvm_args(w);
}

Result<std::string> to_tvm_line(const Record& record, const json& args) {
  ordered_json config = ordered_json::object();
  config["index"] = record.config_index;
  config["code_hash"] = nullptr;
  config["entity"] = ordered_json::parse(line::dump(record.entities), nullptr, false);
  return format_tvm_line(tvm_target_string(record.target), record.task_name, args, config,
                         record.costs, record.error_no, record.all_cost, record.timestamp);
}

Result<std::string> to_tvm_line(const Record& record) {
  Result<json> args = tvm_args_of(record.task_name, record.workload);
  if (!args.ok()) {
    return InvalidArgument("record " + std::to_string(record.id) +
                           " cannot be written as a TVM log line: " + args.status().message());
  }
  return to_tvm_line(record, *args);
}

Result<ImportedLine> parse_tvm_json(const json& row) {
  if (!row.is_object()) return InvalidArgument("a TVM log line must be a JSON object");
  if (row.contains("v")) {
    return InvalidArgument("AutoTVM log v0.1 row (key \"v\": " + line::dump(row["v"]) +
                           "): not supported, only version 0.2 (TVM skips these rows too)");
  }
  if (auto it = row.find("version"); it != row.end()) {
    if (!it->is_number() || it->get<double>() != kTvmLogVersion) {
      return InvalidArgument("\"version\": " + line::dump(*it) +
                             " is not a log version kiln reads (0.2)");
    }
  }
  ImportedLine out;
  Record& r = out.record;
  // TVM times the NCHWc convolutions packed-in, packed-out: its semantics are kiln's current
  // measurement version (ops/measured_layout.h), so an imported record compares with new ones.
  r.measure_version = ops::kMeasureVersion;

  // "input": [target, task_name, args, kwargs]
  KILN_ASSIGN_OR_RETURN(const json* input, line::field(row, "input", "the line"));
  if (!input->is_array() || input->size() != 4) {
    return InvalidArgument("\"input\" must be [target, task_name, args, kwargs], got " +
                           line::dump(*input));
  }
  KILN_ASSIGN_OR_RETURN(std::string tvm_target, line::as_string((*input)[0], "input[0] (target)"));
  KILN_ASSIGN_OR_RETURN(r.task_name, line::as_string((*input)[1], "input[1] (task name)"));
  const json& args = (*input)[2];
  if (!args.is_array()) {
    return InvalidArgument("input[2] (args) must be a list, got " + line::dump(args));
  }
  const json& kwargs = (*input)[3];
  if (!kwargs.is_object()) {
    return InvalidArgument("input[3] (kwargs) must be an object, got " + line::dump(kwargs));
  }
  r.target = kiln_target_from_tvm(tvm_target);
  if (r.target.empty()) return InvalidArgument("input[0] (target) is empty");
  KILN_ASSIGN_OR_RETURN(const ops::Template* tmpl, template_for_task(r.task_name));
  // TVM's TOPI tasks are created without kwargs (autotvm.md §2); kiln's tasks take none, so
  // keyword arguments describe a task kiln does not model, and dropping them would file the
  // measurement under a different task.
  if (!kwargs.empty()) {
    return InvalidArgument("input[3] (kwargs) " + line::dump(kwargs) + " is not empty: task " +
                           r.task_name + " in kiln takes no keyword arguments");
  }
  Status target_fits = check_target_for_task(r.target, r.task_name);
  if (!target_fits.ok()) return InvalidArgument("input[0] (target): " + target_fits.message());
  KILN_ASSIGN_OR_RETURN(ops::Workload workload, workload_from_tvm_args(*tmpl, args));
  r.workload = workload.to_string();
  r.flop = tmpl->flop(workload);

  // "config": {"index", "code_hash", "entity"}; code_hash is informational (TVM ignores it too).
  KILN_ASSIGN_OR_RETURN(const json* config, line::field(row, "config", "the line"));
  KILN_ASSIGN_OR_RETURN(const json* index_json, line::field(*config, "index", "\"config\""));
  KILN_ASSIGN_OR_RETURN(int64_t logged_index, line::as_int(*index_json, "config.index"));
  KILN_ASSIGN_OR_RETURN(const json* entity, line::field(*config, "entity", "\"config\""));
  KILN_RETURN_IF_ERROR(
      line::resolve_config(*tmpl, workload, *entity, logged_index, &r, &out.warnings));

  // "result": [costs, error_no, all_cost, timestamp]
  KILN_ASSIGN_OR_RETURN(const json* result, line::field(row, "result", "the line"));
  if (!result->is_array() || result->size() != 4) {
    return InvalidArgument("\"result\" must be [costs, error_no, all_cost, timestamp], got " +
                           line::dump(*result));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<double> costs,
                        line::as_numbers((*result)[0], "result[0] (costs)"));
  KILN_ASSIGN_OR_RETURN(int64_t error_no, line::as_int((*result)[1], "result[1] (error_no)"));
  KILN_ASSIGN_OR_RETURN(r.all_cost, line::as_number((*result)[2], "result[2] (all_cost)"));
  KILN_ASSIGN_OR_RETURN(r.timestamp, line::as_number((*result)[3], "result[3] (timestamp)"));
  if (error_no < 0 || error_no > kMaxMeasureError) {
    return InvalidArgument("result[1] (error_no) " + std::to_string(error_no) +
                           " is not a MeasureErrorNo (0..8)");
  }
  r.error_no = static_cast<int>(error_no);
  if (r.error_no == static_cast<int>(MeasureError::kNoError)) {
    KILN_RETURN_IF_ERROR(line::check_success_costs(costs, "result[0] (costs)"));
    r.costs = std::move(costs);
  } else {
    r.error_msg = std::string("imported from a TVM log: ") + error_no_name(r.error_no);
    if (costs != std::vector<double>{kTvmFailedCost}) {
      out.warnings.push_back("result[0] (costs) " + line::dump((*result)[0]) +
                             " of a failed measurement dropped (TVM writes [1e9] there)");
    }
  }
  Status valid = validate_record(r);
  if (!valid.ok()) return valid;
  return out;
}

Result<ImportedLine> parse_tvm_line(std::string_view text) {
  KILN_ASSIGN_OR_RETURN(json row, line::parse_json(text));
  return parse_tvm_json(row);
}

}  // namespace kiln::store
