// The SQLite backend of JobStore (store/job_store.h): the jobs table (schema version 5) of the
// store's SQLite file. It has its own connection (WAL, busy timeout, synchronous=FULL, as
// SqliteStore), so the daemon's job updates do not wait behind its record appends in one
// process; every call is one transaction, serialized by a mutex.
#pragma once

#include <memory>
#include <mutex>

#include "store/job_store.h"

namespace kiln::store::sqlite {

class Database;

class SqliteJobStore final : public JobStore {
 public:
  // Opens (creating and migrating like SqliteStore::open) the store at `path`; read_only opens an
  // existing store of the current schema without writing to it (kiln report, beside a daemon).
  static Result<std::unique_ptr<SqliteJobStore>> open(const std::string& path, bool read_only);
  ~SqliteJobStore() override;
  SqliteJobStore(const SqliteJobStore&) = delete;
  SqliteJobStore& operator=(const SqliteJobStore&) = delete;

  Result<int64_t> add(const std::string& name, const std::string& spec, const std::string& base_dir,
                      int64_t priority, double now) override;
  Result<bool> exists(int64_t id) override;
  Result<JobRow> get(int64_t id) override;
  Result<std::vector<JobRow>> list() override;
  Status set_state(int64_t id, JobState state, const std::string& reason, double now) override;
  Status add_seconds(int64_t id, double seconds, double now) override;
  Result<int64_t> count_records(int64_t id) override;
  Result<int64_t> requeue_running(double now) override;
  Result<bool> claim_job(int64_t id, const std::string& owner, double lease_s, double now) override;
  Result<std::vector<OwnedJob>> renew_jobs(const std::string& owner,
                                           const std::vector<int64_t>& ids, double lease_s,
                                           double now) override;
  Result<bool> release_job(int64_t id, const std::string& owner, JobState state,
                           const std::string& reason, double now) override;
  Result<bool> request_job(int64_t id, JobRequest request, double now) override;
  Result<bool> change_state(int64_t id, JobState expected, JobState state,
                            const std::string& reason, double now) override;

 private:
  explicit SqliteJobStore(std::unique_ptr<Database> db);
  Status check_exists(int64_t id);  // REQUIRES mu_ held
  std::mutex mu_;
  std::unique_ptr<Database> db_;
};

}  // namespace kiln::store::sqlite
