// The PostgreSQL backend of JobStore (store/job_store.h): the jobs table of a PostgreSQL store
// (store/postgres/pg_store.h), through a connection of its own, with the same reconnection and
// retries. Every call is one transaction, serialized by a mutex.
#pragma once

#include <memory>
#include <mutex>

#include "store/job_store.h"

namespace kiln::store::postgres {

class Connection;
class Tx;

class PgJobStore final : public JobStore {
 public:
  // Opens (creating and migrating like PgStore::open) the store at `uri`; read_only opens an
  // existing store of the current schema without writing to it.
  static Result<std::unique_ptr<PgJobStore>> open(const std::string& uri, bool read_only);
  ~PgJobStore() override;
  PgJobStore(const PgJobStore&) = delete;
  PgJobStore& operator=(const PgJobStore&) = delete;

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
  explicit PgJobStore(std::unique_ptr<Connection> c);
  Status check_writable(const char* what) const;
  static Status exists_in(Tx& tx, int64_t id);  // "no job N" unless it exists
  std::mutex mu_;
  std::unique_ptr<Connection> c_;
};

}  // namespace kiln::store::postgres
