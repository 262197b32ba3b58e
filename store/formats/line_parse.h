// Pieces shared by the log line readers (internal to store/formats/): JSON parsing that reports
// instead of throwing, typed field access whose errors name the field, and the check of a config
// against its task's space.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ops/template.h"
#include "ops/workload.h"
#include "store/record.h"

namespace kiln::store::line {

// Parses one line of JSON; the error is "not valid JSON (<where and why>)".
Result<nlohmann::json> parse_json(std::string_view text);

// JSON text for messages and storage; never throws (invalid UTF-8 is replaced).
std::string dump(const nlohmann::json& value);

// ordered_json -> json (arrays keep their order; object keys get sorted).
nlohmann::json to_json(const nlohmann::ordered_json& value);

// obj[key], or an error "missing key "KEY"" / "WHERE is not an object".
Result<const nlohmann::json*> field(const nlohmann::json& obj, const char* key,
                                    std::string_view where);

// Typed reads. `what` names the value in the error, e.g. "result[1] (error_no)".
Result<std::string> as_string(const nlohmann::json& v, std::string_view what);
Result<int64_t> as_int(const nlohmann::json& v, std::string_view what);
Result<double> as_number(const nlohmann::json& v, std::string_view what);
Result<std::vector<double>> as_numbers(const nlohmann::json& v, std::string_view what);

// The costs of a successful measurement: at least one, each a positive finite number of seconds
// (a cost of 0 would rank as infinitely fast and print "inf GFLOPS"). `what` names the list.
Status check_success_costs(const std::vector<double>& costs, std::string_view what);

// Checks `entity_list` against the space of (tmpl, workload) and fills the record's
// config_index and entities with the space's canonical form (knob definition order). When
// `logged_index` differs from the index of the entities, adds a warning and keeps the latter.
Status resolve_config(const ops::Template& tmpl, const ops::Workload& workload,
                      const nlohmann::json& entity_list, std::optional<int64_t> logged_index,
                      Record* record, std::vector<std::string>* warnings);

}  // namespace kiln::store::line
