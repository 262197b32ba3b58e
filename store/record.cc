#include "store/record.h"

#include <cmath>
#include <limits>

#include "store/formats/py_json.h"

namespace kiln::store {

const char* error_no_name(int error_no) {
  if (error_no < 0 || error_no > kMaxMeasureError) return "INVALID";
  return measure_error_name(static_cast<MeasureError>(error_no));
}

double Record::mean_cost() const {
  if (error_no != static_cast<int>(MeasureError::kNoError) || costs.empty())
    return std::numeric_limits<double>::infinity();
  double sum = 0;
  for (double c : costs) sum += c;
  return sum / static_cast<double>(costs.size());
}

double Record::flops() const {
  double cost = mean_cost();
  return std::isfinite(cost) && cost > 0 ? flop / cost : 0.0;
}

Result<std::string> canonical_measure_options(const nlohmann::json& options) {
  if (!options.is_object()) {
    return InvalidArgument("measure options must be a JSON object, got " +
                           options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  for (const auto& [key, value] : options.items()) {
    bool finite_number = value.is_number() && std::isfinite(value.get<double>());
    if (!value.is_boolean() && !value.is_string() && !finite_number) {
      return InvalidArgument("measure option \"" + key +
                             "\" must be a boolean, a string or a finite number");
    }
    if (!is_valid_utf8(key) || (value.is_string() && !is_valid_utf8(value.get<std::string>()))) {
      return InvalidArgument("measure options must be UTF-8 text");
    }
  }
  // nlohmann::json keeps object keys sorted (std::map), and dump() without indent is compact.
  return options.dump();
}

bool is_environmental_failure(const Record& r) {
  switch (static_cast<MeasureError>(r.error_no)) {
    case MeasureError::kBuildTimeout:
    case MeasureError::kRunTimeout:
      return true;
    case MeasureError::kRuntimeDevice:
      return r.runner_lost;
    default:
      return false;
  }
}

bool is_emulated(const Record& r) {
  return r.measure_options.find(kEmulatedMeasureOption) != std::string::npos;
}

std::string emulated_measure_options(const std::string& measure_options) {
  nlohmann::json options = nlohmann::json::object();
  if (!measure_options.empty()) {
    options = nlohmann::json::parse(measure_options, nullptr, /*allow_exceptions=*/false);
    if (!options.is_object()) options = nlohmann::json::object();
  }
  options["emulated"] = true;
  Result<std::string> text = canonical_measure_options(options);
  return text.ok() ? *text : std::string("{") + std::string(kEmulatedMeasureOption) + "}";
}

bool is_comparable(const Record& r) {
  return r.measure_version >= ops::oldest_comparable_version(r.task_name) && !is_emulated(r);
}

Status validate_record(const Record& r) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("record (task " + r.task_name + ", workload " + r.workload +
                           ", config " + std::to_string(r.config_index) + "): " + why);
  };
  auto finite_non_negative = [](double x) { return std::isfinite(x) && x >= 0; };
  if (r.target.empty()) return bad("empty target");
  if (r.task_name.empty()) return bad("empty task name");
  if (r.workload.empty()) return bad("empty workload");
  if (r.config_index < 0) return bad("negative config index");
  for (const std::string* text : {&r.target, &r.task_name, &r.workload}) {
    if (!is_valid_utf8(*text)) return bad("target, task name and workload must be UTF-8 text");
  }
  if (!r.entities.is_array()) {
    return bad("entities must be a JSON array, got " +
               r.entities.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  // The entities must be writable as TVM log JSON: UTF-8 strings, finite numbers.
  if (Result<std::string> text = py_json_dumps(r.entities); !text.ok()) {
    return bad("entities: " + text.status().message());
  }
  if (r.error_no < 0 || r.error_no > kMaxMeasureError) {
    return bad("error_no " + std::to_string(r.error_no) + " is not a MeasureErrorNo (0..8)");
  }
  if (r.error_no == static_cast<int>(MeasureError::kNoError) && r.costs.empty())
    return bad("a successful record needs costs");
  if (r.error_no != static_cast<int>(MeasureError::kNoError) && !r.costs.empty()) {
    return bad("a failed record (error_no " + std::to_string(r.error_no) + ") must have no costs");
  }
  for (double c : r.costs) {
    if (!finite_non_negative(c)) return bad("cost " + std::to_string(c) + " is not a finite >= 0");
  }
  if (!finite_non_negative(r.all_cost)) return bad("all_cost is not a finite number >= 0");
  if (!finite_non_negative(r.timestamp)) return bad("timestamp is not a finite number >= 0");
  if (!finite_non_negative(r.flop)) return bad("flop is not a finite number >= 0");
  if (r.runner_lost && r.error_no != static_cast<int>(MeasureError::kRuntimeDevice))
    return bad("runner_lost is only meaningful with error_no 4 (RUNTIME_DEVICE)");
  if (r.measure_version < 1 || r.measure_version > ops::kMeasureVersion) {
    return bad(
        "measure_version " + std::to_string(r.measure_version) +
        (r.measure_version > ops::kMeasureVersion
             ? " was measured by a newer kiln (this kiln measures version " +
                   std::to_string(ops::kMeasureVersion) + ")"
             : " is not a measurement version (1.." + std::to_string(ops::kMeasureVersion) + ")"));
  }
  if (!r.measure_options.empty()) {
    nlohmann::json options =
        nlohmann::json::parse(r.measure_options, nullptr, /*allow_exceptions=*/false);
    if (options.is_discarded()) return bad("measure_options is not JSON text");
    Result<std::string> canonical = canonical_measure_options(options);
    if (!canonical.ok()) return bad(canonical.status().message());
    if (*canonical != r.measure_options) {
      return bad("measure_options is not in canonical form (compact, keys sorted): " +
                 r.measure_options);
    }
  }
  return Status::Ok();
}

}  // namespace kiln::store
