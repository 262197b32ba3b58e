// The benchmarks' results as a JSON file (bench/model_bench and bench/kernel_bench --json-out),
// which `kiln report --bench FILE` reads back. One format, written and read here:
//
//   {"kiln_bench": 1, "benchmark": "model_bench", "rows": [
//     {"label": "resnet18 tuned T=1", "kiln_ms": 12.3, "peers": {"ONNX Runtime": 15.1},
//      "fields": {...the benchmark's own JSON line...}}, ...]}
//
// kiln_ms and a peer's ms are positive numbers, or null when that side was not timed. Linked by
// the benchmarks, so it depends on nothing but nlohmann_json and common/.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::report {

struct BenchResultRow {
  std::string label;
  std::optional<double> kiln_ms;
  std::map<std::string, std::optional<double>> peer_ms;  // peer name -> ms
  nlohmann::json fields = nlohmann::json::object();      // the benchmark's own row
};

struct BenchResults {
  std::string benchmark;  // the program that wrote it
  std::vector<BenchResultRow> rows;
};

// Writes `results` to `path` (replacing it). Errors name the file.
Status write_bench_file(const std::string& path, const BenchResults& results);
// Reads a file write_bench_file wrote. Errors name the file and the row or field at fault.
Result<BenchResults> read_bench_file(const std::string& path);

}  // namespace kiln::report
