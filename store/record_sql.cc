#include "store/record_sql.h"

#include <nlohmann/json.hpp>

#include "ops/measured_layout.h"

namespace kiln::store {

std::string sql_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string comparable_sql() {
  std::string oldest = "CASE task_name";
  for (std::string_view name : ops::templates_with_newer_measurements()) {
    oldest += " WHEN " + sql_quote(name) + " THEN " +
              std::to_string(ops::oldest_comparable_version(name));
  }
  // is_emulated: measure_options holds kEmulatedMeasureOption (no '%', '_' or quote in it).
  return "(measure_version >= (" + oldest + " ELSE 1 END) AND measure_options NOT LIKE " +
         sql_quote("%" + std::string(kEmulatedMeasureOption) + "%") + ")";
}

Status decode_json_columns(const std::string& store, const std::string& entities,
                           const std::string& costs_text, Record& r) {
  auto corrupt = [&](const char* column) {
    return InvalidArgument("record store '" + store + "': record " + std::to_string(r.id) +
                           " has a malformed " + column + " column");
  };
  r.entities = nlohmann::json::parse(entities, nullptr, /*allow_exceptions=*/false);
  if (r.entities.is_discarded() || !r.entities.is_array()) return corrupt("entities");
  nlohmann::json costs = nlohmann::json::parse(costs_text, nullptr, /*allow_exceptions=*/false);
  if (costs.is_discarded() || !costs.is_array()) return corrupt("costs");
  r.costs.clear();
  for (const auto& c : costs) {
    if (!c.is_number()) return corrupt("costs");
    r.costs.push_back(c.get<double>());
  }
  return Status::Ok();
}

Status validate_batch(const std::string& store, const std::vector<Record>& batch) {
  for (size_t i = 0; i < batch.size(); ++i) {
    Status s = validate_record(batch[i]);
    if (!s.ok()) {
      return InvalidArgument("record store '" + store + "': batch item " + std::to_string(i) +
                             ": " + s.message());
    }
  }
  return Status::Ok();
}

Status check_run_times_delta(const std::string& store, bool read_only, const RunTimes& delta) {
  if (read_only) {
    return InvalidArgument("record store '" + store +
                           "': opened read-only, cannot record run times");
  }
  if (delta.run.empty()) {
    return InvalidArgument("record store '" + store + "': run times without a run identity");
  }
  if (const char* field = invalid_run_times_field(delta)) {
    return InvalidArgument("record store '" + store + "': run times of run '" + delta.run +
                           "': " + field + " is not a finite non-negative number");
  }
  return Status::Ok();
}

}  // namespace kiln::store
