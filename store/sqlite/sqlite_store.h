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
// Schema: versioned with PRAGMA user_version and migrated on open (store/sqlite/schema.h). A file from a
// newer kiln, another application's database, a non-SQLite or corrupt file: a clear error naming
// the file.
//
// Thread-safety: a RecordStore may be used from several threads; calls are serialized by an
// internal mutex. Do not share one across fork(): open a new one in the child.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "exchange/task.h"
#include "store/record.h"
#include "store/run_times.h"

namespace kiln::store {

namespace sqlite {
class Database;
}

// Which records of their measurement versions a query returns (Record::measure_version).
enum class Versions {
  kAll,
  kComparable,  // is_comparable: those that compare with a measurement made now
  kOutdated,    // the others: measured under older semantics of their template
};

// Which records a query returns. Unset fields match everything.
struct RecordFilter {
  std::optional<std::string> target;
  std::optional<std::string> task_name;
  std::optional<std::string> workload;
  std::optional<std::string> source;  // who wrote the records (e.g. a daemon job, JobStore)
  bool only_ok = false;               // only error_no == 0
  int64_t after_id = 0;               // only records with id > after_id (incremental reads)
  std::optional<int64_t> limit;       // at most this many (the first ones by id); REQUIRES >= 0
  Versions versions = Versions::kAll;

  // The records of one task: its target, template name and workload, the parts of Task::key().
  static RecordFilter of_task(const Task& task);
};

// The task a lease is about: the records of (target, task_name, workload).
struct TaskKey {
  std::string target;
  std::string task_name;
  std::string workload;

  static TaskKey of(const Task& task);  // the parts of Task::key()
};

// A config claimed by a tuner (see RecordStore::claim).
struct Lease {
  int64_t config_index = 0;
  std::string owner;
  double expires = 0;  // unix seconds

  bool operator==(const Lease&) const = default;
};

// What RecordStore::claim did.
struct Claim {
  std::vector<Record> unseen;    // the task's records with id > after_id, ordered by id
  std::vector<int64_t> claimed;  // the requested configs now leased to the owner, in order
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
  // With a `lease_owner`, the same transaction releases that owner's leases on the appended
  // configs (a recorded config needs no claim any more); other owners' leases are untouched.
  // With `run_times`, the same transaction adds them to their run's row (add_run_times), so that
  // a run's recorded trials and times never disagree with its records, however it ends.
  Status append(const std::vector<Record>& batch, const std::string& lease_owner = {},
                const RunTimes* run_times = nullptr);

  // Records matching `filter`, ordered by id.
  Result<std::vector<Record>> records(const RecordFilter& filter = {});
  // Number of records matching `filter` (its limit is ignored).
  Result<int64_t> count(const RecordFilter& filter = {});

  // The successful record with the smallest mean cost for (target, task_name, workload); ties go
  // to the earliest id (AutoTVM replaces its best only on strictly smaller cost). nullopt when
  // no successful record exists. Only comparable records (is_comparable) compete: a record of
  // an older measurement version timed another program and is never the best.
  Result<std::optional<Record>> best(const std::string& target, const std::string& task_name,
                                     const std::string& workload);
  // best() for every (target, task_name, workload) that has a successful comparable record,
  // optionally for one target only; ordered by id (the order in which the winners were measured).
  Result<std::vector<Record>> best_per_workload(
      const std::optional<std::string>& target = std::nullopt);

  // The config indices already recorded for the task by comparable records, whatever their error
  // code (to resume tuning without measuring a config twice; a config recorded only under an
  // older measurement version is measured again).
  Result<std::set<int64_t>> measured_indices(const std::string& target,
                                             const std::string& task_name,
                                             const std::string& workload);

  // Leases: concurrent tuners of one task claim configs before building them, so that none is
  // measured twice. A lease expires (unix seconds, from the caller's clock, so tests can inject
  // one) so that the claims of a killed tuner stop blocking; its owner renews it while it works.
  //
  // claim() runs in ONE write transaction: it reads the task's records appended after
  // `after_id` (returned as `unseen`: what others recorded since the caller last looked), drops
  // the task's expired leases (expires <= now), and leases to `owner` until `expires` each of
  // `configs` that no other owner holds (a lease the owner holds already is renewed). Deciding
  // whether a config is already done stays the caller's: it sees every record up to the claim,
  // and releases the claimed configs that `unseen` shows to be done. Since a claimed config
  // cannot be claimed by anyone else until the lease ends, two tuners that follow this protocol
  // never measure a config twice while their leases hold.
  Result<Claim> claim(const TaskKey& task, const std::vector<int64_t>& configs, int64_t after_id,
                      const std::string& owner, double now, double expires);
  // Extends every lease `owner` holds (on any task) to `expires`.
  Status renew_leases(const std::string& owner, double expires);
  // Drops `owner`'s leases on `configs` of the task (configs it will not measure after all).
  Status release_leases(const TaskKey& task, const std::vector<int64_t>& configs,
                        const std::string& owner);
  // The task's leases, expired ones included, ordered by config.
  Result<std::vector<Lease>> leases(const TaskKey& task);

  // Adds `delta` to the run's row for its task (run, target, task_name, workload), creating the
  // row when absent: trials, errors and seconds are summed (cooldown_s stays unknown until an
  // addition knows it), source and updated are replaced, started is kept from the first
  // addition. One transaction. Errors: a read-only store, negative or non-finite numbers.
  Status add_run_times(const RunTimes& delta);
  // The rows of run_times, those whose records carry `source` when given; ordered by started.
  Result<std::vector<RunTimes>> run_times(const std::optional<std::string>& source = std::nullopt);

  // SQLite's PRAGMA integrity_check over the whole file; an error lists the problems found.
  Status check_integrity();

 private:
  explicit RecordStore(std::unique_ptr<sqlite::Database> db);
  Status check_writable(const char* what) const;
  // add_run_times' checks, and its upsert inside the caller's transaction (REQUIRES: mu_ held).
  Status check_run_times(const RunTimes& delta) const;
  Status upsert_run_times(const RunTimes& delta);
  // Runs `body` in a BEGIN IMMEDIATE transaction: committed when it succeeds, rolled back
  // otherwise. REQUIRES: mu_ held.
  Status write_transaction(const std::function<Status()>& body);

  std::mutex mu_;
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace kiln::store
