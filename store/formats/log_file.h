// Moving records between a Store and log files: import of TVM autotvm v0.2 logs and kiln
// logs (the format detected per line), export in either format.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/formats/kiln_log.h"
#include "store/formats/tvm_log.h"
#include "store/store.h"

namespace kiln::store {

enum class LogFormat { kTvm, kKiln };

// "tvm" or "kiln"; the error lists both.
Result<LogFormat> parse_log_format(std::string_view name);

// Reads one line of either format: a JSON object with "kiln_record" is a kiln line, any other
// object a TVM line (parse_kiln_json / parse_tvm_json say what is wrong with it).
Result<ImportedLine> parse_log_line(std::string_view line);

struct ImportReport {
  int64_t lines = 0;       // lines read, blank and comment lines included
  int64_t imported = 0;    // records appended
  int64_t duplicates = 0;  // valid lines not appended because the record is already there
  // One "FILE:LINE: reason" per line that was not imported for a reason other than being a
  // duplicate, blank or a comment.
  std::vector<std::string> skipped;
  std::vector<std::string> warnings;       // "FILE:LINE: warning: ..." (the record was imported)
  std::map<std::string, int64_t> targets;  // kiln target -> records imported for it

  // Lines that hold a record (neither blank nor a comment): each is imported, a duplicate, or
  // skipped.
  int64_t record_lines() const {
    return imported + duplicates + static_cast<int64_t>(skipped.size());
  }
  // The file had records but every one was rejected: nothing of it is in the store.
  bool all_rejected() const { return !skipped.empty() && imported == 0 && duplicates == 0; }
};

// Imports a log file into `store`, line by line:
//   - blank lines and lines starting with '#' (after leading spaces) are ignored, as TVM does;
//   - each other line is parsed with parse_log_line; a bad line is reported in `skipped` and
//     the import goes on (truncated JSON, unknown task, bad entities, wrong types, v0.1 rows...);
//   - a record equal to one already in the store or earlier in the file (same target, task,
//     workload, config, error_no, costs, all_cost and timestamp) is counted in `duplicates` and
//     not appended, so importing a file twice is harmless;
//   - valid records are appended in batches, one transaction each (kImportBatch records).
// `source` becomes every imported record's source. When empty, kiln lines keep their own source
// and TVM lines (and kiln lines without one) get "import:<path>".
// Errors (the report is lost, batches appended before stay): the file cannot be read, the
// store fails.
inline constexpr size_t kImportBatch = 1000;
Result<ImportReport> import_file(Store& store, const std::string& path,
                                 std::string_view source = {});
// Same, from a stream; `name` stands for the file in messages and the default source.
Result<ImportReport> import_stream(Store& store, std::istream& in, const std::string& name,
                                   std::string_view source = {});

struct ExportOptions {
  LogFormat format = LogFormat::kKiln;
  // One record per (target, task, workload): the best successful one, ties to the earliest
  // (AutoTVM's pick_best, except that TVM groups by target key, e.g. "cpu", where kiln keeps
  // different kiln targets apart). Failed records are then never exported.
  bool best_only = false;
  RecordFilter filter;  // which records (before picking the best ones); ordered by id
};

struct ExportReport {
  int64_t written = 0;
  // "record ID: reason" for each record not written (e.g. a task this kiln has no template
  // for, when writing TVM lines, which need the template's args; a record of an older
  // measurement version, which a TVM line cannot carry: TVM's kernel times another program).
  std::vector<std::string> skipped;
};

// Writes the selected records, one line each ('\n'), ordered by id.
Result<ExportReport> export_records(Store& store, std::ostream& out, const ExportOptions& options);
// Same, to a file written whole or not at all (a temporary file renamed over `path`).
Result<ExportReport> export_file(Store& store, const std::string& path,
                                 const ExportOptions& options);

}  // namespace kiln::store
