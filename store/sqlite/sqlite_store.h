// The SQLite backend of Store (store/store.h): the records, leases and run times in one SQLite
// file (DESIGN.md "Store"), shared safely by several processes:
//   - WAL journal: readers never block the writer nor each other, and see whole transactions.
//   - busy_timeout (kBusyTimeoutMs): a second writer waits for the first instead of failing.
//   - synchronous=FULL: append() returns only after its transaction is fsynced to the WAL, so an
//     acknowledged batch survives a process kill AND a power loss. (WAL + NORMAL would survive a
//     process crash only.) The cost is one fsync per batch, negligible next to the seconds a
//     batch of measurements takes.
//   - one transaction per append(): a batch is wholly present or wholly absent after any crash.
//
// Schema: versioned with PRAGMA user_version and migrated on open (store/sqlite/schema.h). A file
// from a newer kiln, another application's database, a non-SQLite or corrupt file: a clear error
// naming the file.
//
// Thread-safety: calls are serialized by an internal mutex.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "store/store.h"

namespace kiln::store::sqlite {

class Database;

// SQLite's busy timeout for every connection to a store (records and jobs).
inline constexpr int kBusyTimeoutMs = 10000;

class SqliteStore final : public Store {
 public:
  // Opens the store at `path`, creating and initializing it when absent (unless read_only), and
  // migrating an older schema (read-write only; a read-only open of an older or uninitialized
  // store is an error). Errors name the file.
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path, bool read_only);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  const std::string& path() const override;
  bool read_only() const override;
  // PRAGMA user_version of the file.
  Result<int64_t> schema_version() override;

  Status append(const std::vector<Record>& batch, const std::string& lease_owner,
                const RunTimes* run_times) override;
  Result<std::vector<Record>> records(const RecordFilter& filter) override;
  Result<int64_t> count(const RecordFilter& filter) override;
  Result<std::optional<Record>> best(const std::string& target, const std::string& task_name,
                                     const std::string& workload) override;
  Result<std::vector<Record>> best_per_workload(const std::optional<std::string>& target) override;
  Result<std::set<int64_t>> measured_indices(const std::string& target,
                                             const std::string& task_name,
                                             const std::string& workload) override;

  Result<Claim> claim(const TaskKey& task, const std::vector<int64_t>& configs, int64_t after_id,
                      const std::string& owner, double now, double expires) override;
  Status renew_leases(const std::string& owner, double expires) override;
  Status release_leases(const TaskKey& task, const std::vector<int64_t>& configs,
                        const std::string& owner) override;
  Result<std::vector<Lease>> leases(const TaskKey& task) override;

  Status add_run_times(const RunTimes& delta) override;
  Result<std::vector<RunTimes>> run_times(const std::optional<std::string>& source) override;

  // SQLite's PRAGMA integrity_check over the whole file.
  Status check_integrity() override;

 private:
  explicit SqliteStore(std::unique_ptr<Database> db);
  Status check_writable(const char* what) const;
  // add_run_times' checks, and its upsert inside the caller's transaction (REQUIRES: mu_ held).
  Status check_run_times(const RunTimes& delta) const;
  Status upsert_run_times(const RunTimes& delta);
  // Runs `body` in a BEGIN IMMEDIATE transaction: committed when it succeeds, rolled back
  // otherwise. REQUIRES: mu_ held.
  Status write_transaction(const std::function<Status()>& body);

  std::mutex mu_;
  std::unique_ptr<Database> db_;
};

}  // namespace kiln::store::sqlite
