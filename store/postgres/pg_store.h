// The PostgreSQL backend of Store (store/store.h): a team's records, leases and run times in one
// database that several kiln processes on several machines share (README "Team store").
// Opened by a connection URI (postgresql://user@host:5432/db?sslmode=verify-full); libpq reads
// the password from PGPASSFILE / ~/.pgpass and passes sslmode through.
//
//   - One transaction per call: a batch is wholly present or wholly absent; an acknowledged
//     append is committed (the server's synchronous_commit decides its durability).
//   - Record ids increase in commit order: appends serialize on an advisory lock held from the
//     first id to COMMIT, so that a reader of records after an id (Store::claim's unseen,
//     incremental reads) never misses a record committed later with a smaller id.
//   - Claims are one transaction of INSERT ... ON CONFLICT: two processes claiming the same
//     config wait on its row, and only one gets it. The unseen records are read after the
//     leases are taken, so a record whose lease its append released is never missed.
//   - A lost connection (server restarted, network cut) is reopened and the call retried with
//     bounded retries (store/postgres/pg_connection.h); an append interrupted at COMMIT is never
//     applied twice (its token is looked up first).
//
// Schema: versioned in kiln_meta and migrated on a read-write open (store/postgres/pg_schema.h).
// Errors name the store by its URI without the password. Thread-safety: calls are serialized by
// an internal mutex.
#pragma once

#include <memory>
#include <mutex>

#include "store/store.h"

namespace kiln::store::postgres {

class Connection;

class PgStore final : public Store {
 public:
  // Connects to `uri`, creating the schema in an empty database (unless read_only) and
  // migrating an older one. A read-only open of an empty or older store is an error.
  static Result<std::unique_ptr<PgStore>> open(const std::string& uri, bool read_only);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  const std::string& path() const override;
  bool read_only() const override;
  Result<int64_t> schema_version() override;
  Status append(const std::vector<Record>& batch, const std::string& lease_owner = {},
                const RunTimes* run_times = nullptr) override;
  Result<std::vector<Record>> records(const RecordFilter& filter = {}) override;
  Result<int64_t> count(const RecordFilter& filter = {}) override;
  Result<std::optional<Record>> best(const std::string& target, const std::string& task_name,
                                     const std::string& workload) override;
  Result<std::vector<Record>> best_per_workload(
      const std::optional<std::string>& target = std::nullopt) override;
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
  Result<std::vector<RunTimes>> run_times(
      const std::optional<std::string>& source = std::nullopt) override;
  Status check_integrity() override;

 private:
  explicit PgStore(std::unique_ptr<Connection> c);
  Status check_writable(const char* what) const;
  Status check_run_times(const RunTimes& delta) const;

  std::mutex mu_;
  std::unique_ptr<Connection> c_;
};

// Connects to the store at `uri` and prepares its schema (shared by PgStore and PgJobStore).
Result<std::unique_ptr<Connection>> open_store_connection(const std::string& uri, bool read_only);

}  // namespace kiln::store::postgres
