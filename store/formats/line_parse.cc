#include "store/formats/line_parse.h"

#include <cmath>

#include "store/formats/py_json.h"

namespace kiln::store::line {

using nlohmann::json;

Result<json> parse_json(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: ..." -> drop the tag.
    std::string why = e.what();
    if (size_t tag_end = why.find("] ");
        why.rfind("[json.exception", 0) == 0 && tag_end != std::string::npos) {
      why = why.substr(tag_end + 2);
    }
    // Python's json.dumps writes a non-finite float as NaN / Infinity, which JSON has no word for.
    for (const char* python_literal : {"NaN", "Infinity"}) {
      if (text.find(python_literal) != std::string_view::npos) {
        why += "; the line holds Python's " + std::string(python_literal) +
               ", and kiln needs finite numbers";
        break;
      }
    }
    return InvalidArgument("not valid JSON (" + why + ")");
  }
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

json to_json(const nlohmann::ordered_json& value) {
  // Both are parsed from text we just produced, so this cannot fail.
  return json::parse(value.dump(-1, ' ', false, json::error_handler_t::replace), nullptr, false);
}

Result<const json*> field(const json& obj, const char* key, std::string_view where) {
  if (!obj.is_object()) {
    return InvalidArgument(std::string(where) + " is not a JSON object: " + dump(obj));
  }
  auto it = obj.find(key);
  if (it == obj.end()) {
    return InvalidArgument("missing key \"" + std::string(key) + "\" in " + std::string(where));
  }
  return &*it;
}

namespace {
Status wrong_type(const json& v, std::string_view what, const char* expected) {
  std::string text = dump(v);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return InvalidArgument(std::string(what) + " must be " + expected + ", got " + v.type_name() +
                         " " + text);
}
}  // namespace

Result<std::string> as_string(const json& v, std::string_view what) {
  if (!v.is_string()) return wrong_type(v, what, "a string");
  return v.get<std::string>();
}

Result<int64_t> as_int(const json& v, std::string_view what) {
  if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX)) {
    return v.get<int64_t>();
  }
  return wrong_type(v, what, "an integer");
}

Result<double> as_number(const json& v, std::string_view what) {
  if (!v.is_number()) return wrong_type(v, what, "a number");
  return v.get<double>();
}

Result<std::vector<double>> as_numbers(const json& v, std::string_view what) {
  if (!v.is_array()) return wrong_type(v, what, "a list of numbers");
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(double x,
                          as_number(v[i], std::string(what) + "[" + std::to_string(i) + "]"));
    out.push_back(x);
  }
  return out;
}

Status check_success_costs(const std::vector<double>& costs, std::string_view what) {
  if (costs.empty()) return InvalidArgument(std::string(what) + " is empty for a success");
  for (size_t i = 0; i < costs.size(); ++i) {
    if (!(std::isfinite(costs[i]) && costs[i] > 0)) {
      std::string value = std::isnan(costs[i])   ? "nan"
                          : std::isinf(costs[i]) ? (costs[i] > 0 ? "inf" : "-inf")
                                                 : py_float_repr(costs[i]);
      return InvalidArgument(std::string(what) + "[" + std::to_string(i) + "] is " + value +
                             ": a success needs positive, finite costs (seconds per run)");
    }
  }
  return Status::Ok();
}

Status resolve_config(const ops::Template& tmpl, const ops::Workload& workload,
                      const json& entity_list, std::optional<int64_t> logged_index, Record* record,
                      std::vector<std::string>* warnings) {
  ConfigSpace space = tmpl.space(workload);
  Result<ConfigEntity> config = space.from_json_entities(entity_list);
  if (!config.ok()) {
    return InvalidArgument("config is not in the space of " + std::string(tmpl.name()) + " " +
                           workload.to_string() + ": " + config.status().message());
  }
  record->config_index = config->index();
  record->entities = to_json(config->to_json()["entity"]);
  if (logged_index && *logged_index != config->index()) {
    warnings->push_back("config index " + std::to_string(*logged_index) +
                        " in the log, but its entities are config " +
                        std::to_string(config->index()) + " of kiln's space; using " +
                        std::to_string(config->index()));
  }
  return Status::Ok();
}

}  // namespace kiln::store::line
