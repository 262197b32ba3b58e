#include "store/formats/log_file.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "common/safe_file.h"
#include "store/formats/line_parse.h"

namespace kiln::store {

namespace {

using nlohmann::json;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// What makes two records the same measurement (ids and sources aside).
std::string duplicate_key(const Record& r) {
  return line::dump(json::array({r.config_index, r.error_no, r.costs, r.all_cost, r.timestamp}));
}

// Duplicate detection for an import: the keys of the stored records of each (target, task,
// workload) are loaded the first time a line of that task appears, then grow with the file.
class SeenRecords {
 public:
  explicit SeenRecords(Store* store) : store_(store) {}

  // True when `r` was seen; otherwise remembers it.
  Result<bool> check_and_add(const Record& r) {
    auto group_key = std::make_tuple(r.target, r.task_name, r.workload);
    auto it = groups_.find(group_key);
    if (it == groups_.end()) {
      RecordFilter filter;
      filter.target = r.target;
      filter.task_name = r.task_name;
      filter.workload = r.workload;
      KILN_ASSIGN_OR_RETURN(std::vector<Record> stored, store_->records(filter));
      std::unordered_set<std::string> keys;
      for (const Record& s : stored) keys.insert(duplicate_key(s));
      it = groups_.emplace(group_key, std::move(keys)).first;
    }
    return !it->second.insert(duplicate_key(r)).second;
  }

 private:
  Store* store_;
  std::map<std::tuple<std::string, std::string, std::string>, std::unordered_set<std::string>>
      groups_;
};

bool is_kiln_row(const json& row) { return row.is_object() && row.contains("kiln_record"); }

}  // namespace

Result<LogFormat> parse_log_format(std::string_view name) {
  if (name == "tvm") return LogFormat::kTvm;
  if (name == "kiln") return LogFormat::kKiln;
  return InvalidArgument("unknown log format '" + std::string(name) + "' (expected tvm or kiln)");
}

Result<ImportedLine> parse_log_line(std::string_view text) {
  KILN_ASSIGN_OR_RETURN(json row, line::parse_json(text));
  if (is_kiln_row(row)) return parse_kiln_json(row);
  return parse_tvm_json(row);
}

Result<ImportReport> import_stream(Store& store, std::istream& in, const std::string& name,
                                   std::string_view source) {
  ImportReport report;
  SeenRecords seen(&store);
  std::vector<Record> batch;
  const std::string default_source = "import:" + name;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::Ok();
    Status s = store.append(batch);
    if (!s.ok()) {
      return Status::Error(s.code(), name + ": importing into the store failed after " +
                                         std::to_string(report.imported) +
                                         " records: " + s.message());
    }
    report.imported += static_cast<int64_t>(batch.size());
    batch.clear();
    return Status::Ok();
  };

  std::string raw;
  while (std::getline(in, raw)) {
    ++report.lines;
    std::string where = name + ":" + std::to_string(report.lines) + ": ";
    std::string_view text = trim(raw);
    if (text.empty() || text.front() == '#') continue;
    Result<ImportedLine> parsed = parse_log_line(text);
    if (!parsed.ok()) {
      report.skipped.push_back(where + parsed.status().message());
      continue;
    }
    Record& r = parsed->record;
    for (const std::string& w : parsed->warnings)
      report.warnings.push_back(where + "warning: " + w);
    if (!source.empty()) {
      r.source = std::string(source);
    } else if (r.source.empty()) {
      r.source = default_source;
    }
    KILN_ASSIGN_OR_RETURN(bool duplicate, seen.check_and_add(r));
    if (duplicate) {
      ++report.duplicates;
      continue;
    }
    ++report.targets[r.target];
    batch.push_back(std::move(r));
    if (batch.size() >= kImportBatch) KILN_RETURN_IF_ERROR(flush());
  }
  if (in.bad()) {
    KILN_RETURN_IF_ERROR(flush());
    return IoError(name + ": read error after line " + std::to_string(report.lines));
  }
  KILN_RETURN_IF_ERROR(flush());
  return report;
}

Result<ImportReport> import_file(Store& store, const std::string& path, std::string_view source) {
  // Streamed, so no size cap; but a FIFO or /dev/zero would never end.
  KILN_RETURN_IF_ERROR(check_readable_regular_file(path, "log file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open log file '" + path + "' for reading");
  return import_stream(store, in, path, source);
}

Result<ExportReport> export_records(Store& store, std::ostream& out, const ExportOptions& options) {
  ExportReport report;
  // TVM lines need the task's args; compute them once per (task, workload).
  std::map<std::pair<std::string, std::string>, Result<json>> args_cache;
  auto write = [&](const Record& r) -> Status {
    Result<std::string> text = InternalError("unset");
    if (options.format == LogFormat::kKiln) {
      text = to_kiln_line(r);
    } else if (is_emulated(r)) {
      text = InvalidArgument("measured on an emulator: its costs are not the device's speed");
    } else if (!is_comparable(r)) {
      // A TVM line claims TVM's semantics, which this record's program did not have.
      text = InvalidArgument("measured under measurement version " +
                             std::to_string(r.measure_version) +
                             ", whose timed program differs from TVM's for this task");
    } else {
      auto key = std::make_pair(r.task_name, r.workload);
      auto it = args_cache.find(key);
      if (it == args_cache.end()) {
        it = args_cache.emplace(key, tvm_args_of(r.task_name, r.workload)).first;
      }
      text =
          it->second.ok() ? to_tvm_line(r, *it->second) : Result<std::string>(it->second.status());
    }
    if (!text.ok()) {
      report.skipped.push_back("record " + std::to_string(r.id) + ": " + text.status().message());
      return Status::Ok();
    }
    out << *text << '\n';
    if (!out) return IoError("writing the exported records failed (disk full?)");
    ++report.written;
    return Status::Ok();
  };

  const RecordFilter& f = options.filter;
  if (options.best_only) {
    // The winners are picked over all records; a source filter would change who wins.
    if (f.source) return InvalidArgument("export: the best records cannot be filtered by source");
    KILN_ASSIGN_OR_RETURN(std::vector<Record> best, store.best_per_workload(f.target));
    int64_t left = f.limit.value_or(INT64_MAX);
    for (const Record& r : best) {
      if (left <= 0) break;
      if (r.id <= f.after_id || (f.task_name && r.task_name != *f.task_name) ||
          (f.workload && r.workload != *f.workload)) {
        continue;
      }
      KILN_RETURN_IF_ERROR(write(r));
      --left;
    }
  } else {
    // Page through by id so that a large store is never held in memory whole.
    constexpr int64_t kPage = 10000;
    RecordFilter page = f;
    int64_t left = f.limit.value_or(INT64_MAX);
    while (left > 0) {
      page.limit = std::min(kPage, left);
      KILN_ASSIGN_OR_RETURN(std::vector<Record> rows, store.records(page));
      for (const Record& r : rows) KILN_RETURN_IF_ERROR(write(r));
      left -= static_cast<int64_t>(rows.size());
      if (static_cast<int64_t>(rows.size()) < *page.limit) break;
      page.after_id = rows.back().id;
    }
  }
  out.flush();
  if (!out) return IoError("writing the exported records failed (disk full?)");
  return report;
}

Result<ExportReport> export_file(Store& store, const std::string& path,
                                 const ExportOptions& options) {
  Result<ExportReport> report = IoError("unset");
  Status written = write_file_atomically(path, [&](std::ostream& out) {
    report = export_records(store, out, options);
    if (!report.ok()) {
      return Status::Error(report.status().code(), path + ": " + report.status().message());
    }
    return Status::Ok();
  });
  if (!written.ok()) return written;
  return report;
}

}  // namespace kiln::store
