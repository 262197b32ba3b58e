// The store's interface: every measurement kiln makes (records), the leases through which
// concurrent tuners of one task share its configs, and where each run's time went (run times).
// A backend implements Store (and JobStore, store/job_store.h); open_store (store/open_store.h)
// picks the backend from a path or URL. Backends: SQLite (store/sqlite/sqlite_store.h). Every
// backend passes the conformance suite (tests/store_conformance_test.cc).
//
// Records are append-only; "best" is a query. A store may be shared by several processes at once
// (the daemon appending while `kiln export` reads); each call is atomic: a batch is wholly present
// or wholly absent, after any crash, and an acknowledged append is durable.
//
// Thread-safety: a Store may be used from several threads. Do not share one across fork(): open
// a new one in the child.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "exchange/task.h"
#include "store/record.h"
#include "store/run_times.h"

namespace kiln::store {

// Which records of their measurement versions a query returns (Record::measure_version).
enum class Versions {
  kAll,
  kComparable,  // is_comparable: those that compare with a measurement made now
  kOutdated,    // the others: measured under older semantics of their template, or emulated
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

// A config claimed by a tuner (see Store::claim).
struct Lease {
  int64_t config_index = 0;
  std::string owner;
  double expires = 0;  // unix seconds

  bool operator==(const Lease&) const = default;
};

// What Store::claim did.
struct Claim {
  std::vector<Record> unseen;    // the task's records with id > after_id, ordered by id
  std::vector<int64_t> claimed;  // the requested configs now leased to the owner, in order
};

class Store {
 public:
  virtual ~Store() = default;

  // Where the store is, as opened (for SQLite, the file's path); every error names it.
  virtual const std::string& path() const = 0;
  virtual bool read_only() const = 0;
  // The version of the store's schema (for SQLite, PRAGMA user_version; store/sqlite/schema.h).
  virtual Result<int64_t> schema_version() = 0;

  // Appends the batch atomically: after return (ok) every record is durable; on error none is
  // stored. Each record is checked first with validate_record (the error names its position in
  // the batch). The records' `id` fields are ignored (the store assigns ids in batch order,
  // increasing). error_msg and source are stored with ill-formed UTF-8 bytes replaced by U+FFFD
  // (they may quote compiler or crash output). An empty batch is a no-op.
  // With a `lease_owner`, the same transaction releases that owner's leases on the appended
  // configs (a recorded config needs no claim any more); other owners' leases are untouched.
  // With `run_times`, the same transaction adds them to their run's row (add_run_times), so that
  // a run's recorded trials and times never disagree with its records, however it ends.
  virtual Status append(const std::vector<Record>& batch, const std::string& lease_owner = {},
                        const RunTimes* run_times = nullptr) = 0;

  // Records matching `filter`, ordered by id.
  virtual Result<std::vector<Record>> records(const RecordFilter& filter = {}) = 0;
  // Number of records matching `filter` (its limit is ignored).
  virtual Result<int64_t> count(const RecordFilter& filter = {}) = 0;

  // The successful record with the smallest mean cost for (target, task_name, workload); ties go
  // to the earliest id (AutoTVM replaces its best only on strictly smaller cost). nullopt when
  // no successful record exists. Only comparable records (is_comparable) compete: a record of
  // an older measurement version timed another program and is never the best.
  virtual Result<std::optional<Record>> best(const std::string& target,
                                             const std::string& task_name,
                                             const std::string& workload) = 0;
  // best() for every (target, task_name, workload) that has a successful comparable record,
  // optionally for one target only; ordered by id (the order in which the winners were measured).
  virtual Result<std::vector<Record>> best_per_workload(
      const std::optional<std::string>& target = std::nullopt) = 0;

  // The config indices already recorded for the task by comparable records, whatever their error
  // code (to resume tuning without measuring a config twice; a config recorded only under an
  // older measurement version is measured again).
  virtual Result<std::set<int64_t>> measured_indices(const std::string& target,
                                                     const std::string& task_name,
                                                     const std::string& workload) = 0;

  // Leases: concurrent tuners of one task claim configs before building them, so that none is
  // measured twice. A lease expires (unix seconds, from the caller's clock, so tests can inject
  // one) so that the claims of a killed tuner stop blocking; its owner renews it while it works.
  //
  // claim() is ONE atomic write: it reads the task's records appended after `after_id` (returned
  // as `unseen`: what others recorded since the caller last looked), drops the task's expired
  // leases (expires <= now), and leases to `owner` until `expires` each of `configs` that no
  // other owner holds (a lease the owner holds already is renewed). Deciding whether a config is
  // already done stays the caller's: it sees every record up to the claim, and releases the
  // claimed configs that `unseen` shows to be done. Since a claimed config cannot be claimed by
  // anyone else until the lease ends, two tuners that follow this protocol never measure a
  // config twice while their leases hold. Errors: a read-only store, an empty owner.
  virtual Result<Claim> claim(const TaskKey& task, const std::vector<int64_t>& configs,
                              int64_t after_id, const std::string& owner, double now,
                              double expires) = 0;
  // Extends every lease `owner` holds (on any task) to `expires`.
  virtual Status renew_leases(const std::string& owner, double expires) = 0;
  // Drops `owner`'s leases on `configs` of the task (configs it will not measure after all).
  virtual Status release_leases(const TaskKey& task, const std::vector<int64_t>& configs,
                                const std::string& owner) = 0;
  // The task's leases, expired ones included, ordered by config.
  virtual Result<std::vector<Lease>> leases(const TaskKey& task) = 0;

  // Adds `delta` to the run's row for its task (run, target, task_name, workload), creating the
  // row when absent: trials, errors and seconds are summed (cooldown_s stays unknown until an
  // addition knows it), source and updated are replaced, started is kept from the first
  // addition. Atomic. Errors: a read-only store, no run identity, negative or non-finite numbers.
  virtual Status add_run_times(const RunTimes& delta) = 0;
  // The run times rows, those whose records carry `source` when given; ordered by started (then
  // by when they were first written).
  virtual Result<std::vector<RunTimes>> run_times(
      const std::optional<std::string>& source = std::nullopt) = 0;

  // The backend's own consistency check over the whole store; an error lists the problems found.
  virtual Status check_integrity() = 0;
};

}  // namespace kiln::store
