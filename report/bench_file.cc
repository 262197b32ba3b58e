#include "report/bench_file.h"

#include <cmath>

#include "common/safe_file.h"

namespace kiln::report {

namespace {

constexpr int kFormatVersion = 1;
// A benchmark's results are a few kilobytes of JSON; the cap only stops a wrong file.
constexpr int64_t kMaxBenchFileBytes = 64 << 20;

nlohmann::json ms_json(const std::optional<double>& ms) {
  return ms ? nlohmann::json(*ms) : nlohmann::json(nullptr);
}

// A time field: null, or a positive finite number.
Result<std::optional<double>> read_ms(const nlohmann::json& v, const std::string& where) {
  if (v.is_null()) return std::optional<double>();
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
    return InvalidArgument(where + ": expected a positive number of milliseconds or null, got " +
                           v.dump());
  }
  return std::optional<double>(v.get<double>());
}

}  // namespace

Status write_bench_file(const std::string& path, const BenchResults& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const BenchResultRow& r : results.rows) {
    nlohmann::json peers = nlohmann::json::object();
    for (const auto& [name, ms] : r.peer_ms) peers[name] = ms_json(ms);
    rows.push_back({{"label", r.label},
                    {"kiln_ms", ms_json(r.kiln_ms)},
                    {"peers", peers},
                    {"fields", r.fields}});
  }
  nlohmann::json doc = {
      {"kiln_bench", kFormatVersion}, {"benchmark", results.benchmark}, {"rows", rows}};
  return write_file_atomically(path, doc.dump(2) + "\n");
}

Result<BenchResults> read_bench_file(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text,
                        read_regular_file(path, kMaxBenchFileBytes, "bench file"));
  const std::string where = "bench file '" + path + "'";
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgument(where + ": not JSON");
  if (!doc.is_object() || !doc.contains("kiln_bench")) {
    return InvalidArgument(where +
                           ": not a kiln benchmark result (no \"kiln_bench\" field; write one "
                           "with model_bench or kernel_bench --json-out)");
  }
  if (doc["kiln_bench"] != kFormatVersion) {
    return InvalidArgument(where + ": format version " + doc["kiln_bench"].dump() +
                           " (this kiln reads version " + std::to_string(kFormatVersion) + ")");
  }
  BenchResults results;
  if (!doc.contains("benchmark") || !doc["benchmark"].is_string()) {
    return InvalidArgument(where + ": \"benchmark\": expected a string");
  }
  results.benchmark = doc["benchmark"].get<std::string>();
  if (!doc.contains("rows") || !doc["rows"].is_array()) {
    return InvalidArgument(where + ": \"rows\": expected an array");
  }
  for (size_t i = 0; i < doc["rows"].size(); ++i) {
    const nlohmann::json& row = doc["rows"][i];
    const std::string at = where + ": rows[" + std::to_string(i) + "]";
    if (!row.is_object()) return InvalidArgument(at + ": expected an object");
    BenchResultRow r;
    if (!row.contains("label") || !row["label"].is_string()) {
      return InvalidArgument(at + ".label: expected a string");
    }
    r.label = row["label"].get<std::string>();
    if (!row.contains("kiln_ms")) return InvalidArgument(at + ".kiln_ms: missing");
    KILN_ASSIGN_OR_RETURN(r.kiln_ms, read_ms(row["kiln_ms"], at + ".kiln_ms"));
    if (!row.contains("peers") || !row["peers"].is_object()) {
      return InvalidArgument(at + ".peers: expected an object of peer name -> ms");
    }
    for (const auto& [name, ms] : row["peers"].items()) {
      KILN_ASSIGN_OR_RETURN(r.peer_ms[name], read_ms(ms, at + ".peers." + name));
    }
    if (row.contains("fields")) r.fields = row["fields"];
    results.rows.push_back(std::move(r));
  }
  return results;
}

}  // namespace kiln::report
