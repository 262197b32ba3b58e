// The record store: every measurement kiln makes, in one SQLite file (DESIGN.md "Store").
//
// Records are append-only; "best" is a query. The file may be shared by several processes at
// once, e.g. the daemon appending while `kiln export` reads:
//   - WAL journal: readers never block the writer nor each other, and see whole transactions.
//   - busy_timeout (kBusyTimeoutMs): a second writer waits for the first instead of failing.
//   - synchronous=FULL: append() returns only after its transaction is fsynced to the WAL, so an
//     acknowledged batch survives a process kill AND a power loss. (WAL + NORMAL would survive a
//     process crash only.) The cost is one fsync per batch, negligible next to the seconds a
//     batch of measurements takes.
//   - one transaction per append(): a batch is wholly present or wholly absent after any crash.
//
// Schema: versioned with PRAGMA user_version and migrated on open (store/schema.h). A file from a
// newer kiln, another application's database, a non-SQLite or corrupt file: a clear error naming
// the file.
//
// Thread-safety: a RecordStore may be used from several threads; calls are serialized by an
// internal mutex. Do not share one across fork(): open a new one in the child.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/record.h"

namespace kiln::store {

namespace sqlite {
class Database;
}

// Which records a query returns. Unset fields match everything.
struct RecordFilter {
  std::optional<std::string> target;
  std::optional<std::string> task_name;
  std::optional<std::string> workload;
  bool only_ok = false;          // only error_no == 0
  int64_t after_id = 0;          // only records with id > after_id (incremental reads)
  std::optional<int64_t> limit;  // at most this many (the first ones by id); REQUIRES >= 0
};

class RecordStore {
 public:
  static constexpr int kBusyTimeoutMs = 10000;

  // Opens the store at `path`, creating and initializing it when absent (unless read_only), and
  // migrating an older schema (read-write only; a read-only open of an older or uninitialized
  // store is an error). Errors name the file.
  static Result<std::unique_ptr<RecordStore>> open(const std::string& path, bool read_only = false);
  ~RecordStore();
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  const std::string& path() const;
  bool read_only() const;
  // PRAGMA user_version of the file.
  Result<int64_t> schema_version();

  // Appends the batch in ONE transaction: after return (ok) every record is durable; on error
  // none is stored. Each record is checked first with validate_record (the error names its
  // position in the batch). The records' `id` fields are ignored (the store assigns ids in batch
  // order, increasing). error_msg and source are stored with ill-formed UTF-8 bytes replaced by
  // U+FFFD (they may quote compiler or crash output). An empty batch is a no-op.
  Status append(const std::vector<Record>& batch);

  // Records matching `filter`, ordered by id.
  Result<std::vector<Record>> records(const RecordFilter& filter = {});
  // Number of records matching `filter` (its limit is ignored).
  Result<int64_t> count(const RecordFilter& filter = {});

  // The successful record with the smallest mean cost for (target, task_name, workload); ties go
  // to the earliest id (AutoTVM replaces its best only on strictly smaller cost). nullopt when
  // no successful record exists.
  Result<std::optional<Record>> best(const std::string& target, const std::string& task_name,
                                     const std::string& workload);
  // best() for every (target, task_name, workload) that has a successful record, optionally for
  // one target only; ordered by id (the order in which the winners were measured).
  Result<std::vector<Record>> best_per_workload(
      const std::optional<std::string>& target = std::nullopt);

  // The config indices already recorded for the task, whatever their error code (to resume
  // tuning without measuring a config twice).
  Result<std::set<int64_t>> measured_indices(const std::string& target,
                                             const std::string& task_name,
                                             const std::string& workload);

  // SQLite's PRAGMA integrity_check over the whole file; an error lists the problems found.
  Status check_integrity();

 private:
  explicit RecordStore(std::unique_ptr<sqlite::Database> db);

  std::mutex mu_;
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace kiln::store
