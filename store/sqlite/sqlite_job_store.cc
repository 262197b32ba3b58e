#include "store/sqlite/sqlite_job_store.h"

#include <string_view>

#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_store.h"

namespace kiln::store::sqlite {

namespace {

constexpr const char* kJobColumns =
    "id, name, spec, base_dir, priority, state, reason, seconds, submitted, updated, owner, "
    "lease_expires, request";

Status unknown_request(const Database& db, int64_t id, const std::string& name) {
  return InvalidArgument("record store '" + db.path() + "': job " + std::to_string(id) +
                         " has an unknown request '" + name + "'");
}

Result<JobRow> row_to_job(const Database& db, const Statement& row) {
  JobRow j;
  std::string state_name;
  std::string request_name;
  row.read_row(j.id, j.name, j.spec, j.base_dir, j.priority, state_name, j.reason, j.seconds,
               j.submitted, j.updated, j.owner, j.lease_expires, request_name);
  std::optional<JobRequest> request = parse_job_request(request_name);
  if (!request) return unknown_request(db, j.id, request_name);
  j.request = *request;
  std::optional<JobState> state = parse_job_state(state_name);
  if (!state) {
    return InvalidArgument("record store '" + db.path() + "': job " + std::to_string(j.id) +
                           " has an unknown state '" + state_name + "'");
  }
  j.state = *state;
  return j;
}

}  // namespace

SqliteJobStore::SqliteJobStore(std::unique_ptr<Database> db) : db_(std::move(db)) {}
SqliteJobStore::~SqliteJobStore() = default;

Result<std::unique_ptr<SqliteJobStore>> SqliteJobStore::open(const std::string& path,
                                                             bool read_only) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Database> db,
                        open_store_database(path, read_only, kBusyTimeoutMs));
  return std::unique_ptr<SqliteJobStore>(new SqliteJobStore(std::move(db)));
}

Result<int64_t> SqliteJobStore::add(const std::string& name, const std::string& spec,
                                    const std::string& base_dir, int64_t priority, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement stmt,
      db_->prepare("INSERT INTO jobs (name, spec, base_dir, priority, state, submitted, updated) "
                   "VALUES (?, ?, ?, ?, 'queued', ?, ?) RETURNING id"));
  stmt.bind_all(1, name, spec, base_dir, priority, now, now);
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  if (!row) return IoError("record store '" + db_->path() + "': adding a job returned no id");
  int64_t id = stmt.column_int(0);
  KILN_RETURN_IF_ERROR(stmt.run());
  return id;
}

Result<bool> SqliteJobStore::exists(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare("SELECT 1 FROM jobs WHERE id = ?"));
  stmt.bind(1, id);
  return stmt.step();
}

Result<JobRow> SqliteJobStore::get(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare(std::string("SELECT ") + kJobColumns +
                                                     " FROM jobs WHERE id = ?"));
  stmt.bind(1, id);
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  if (!row) return InvalidArgument("no job " + std::to_string(id));
  return row_to_job(*db_, stmt);
}

Result<std::vector<JobRow>> SqliteJobStore::list() {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare(std::string("SELECT ") + kJobColumns +
                                                     " FROM jobs ORDER BY id"));
  std::vector<JobRow> out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) break;
    KILN_ASSIGN_OR_RETURN(JobRow j, row_to_job(*db_, stmt));
    out.push_back(std::move(j));
  }
  return out;
}

Status SqliteJobStore::set_state(int64_t id, JobState state, const std::string& reason,
                                 double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET state = ?, reason = ?, updated = ? "
                                     "WHERE id = ?"));
  stmt.bind_all(1, std::string_view(job_state_name(state)), reason, now, id);
  KILN_RETURN_IF_ERROR(stmt.run());
  if (db_->changes() == 0) return InvalidArgument("no job " + std::to_string(id));
  return Status::Ok();
}

Status SqliteJobStore::add_seconds(int64_t id, double seconds, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET seconds = seconds + ?, updated = ? "
                                     "WHERE id = ?"));
  stmt.bind_all(1, seconds, now, id);
  KILN_RETURN_IF_ERROR(stmt.run());
  if (db_->changes() == 0) return InvalidArgument("no job " + std::to_string(id));
  return Status::Ok();
}

Result<int64_t> SqliteJobStore::count_records(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("SELECT count(*) FROM records WHERE source = ?"));
  stmt.bind(1, job_source(id));
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  (void)row;  // count(*) always returns a row
  return stmt.column_int(0);
}

Result<int64_t> SqliteJobStore::requeue_running(double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET state = 'queued', updated = ?, owner = '', "
                                     "lease_expires = 0, request = '' WHERE state = 'running'"));
  stmt.bind(1, now);
  KILN_RETURN_IF_ERROR(stmt.run());
  return db_->changes();
}

Status SqliteJobStore::check_exists(int64_t id) {
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare("SELECT 1 FROM jobs WHERE id = ?"));
  stmt.bind(1, id);
  KILN_ASSIGN_OR_RETURN(bool found, stmt.step());
  return found ? Status::Ok() : InvalidArgument("no job " + std::to_string(id));
}

Result<bool> SqliteJobStore::claim_job(int64_t id, const std::string& owner, double lease_s,
                                       double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement stmt,
      db_->prepare("UPDATE jobs SET state = 'running', owner = ?, lease_expires = ?, "
                   "reason = '', updated = ? WHERE id = ? AND (state = 'queued' OR "
                   "(state = 'running' AND (lease_expires < ? OR owner = ?)))"));
  stmt.bind_all(1, owner, now + lease_s, now, id, now, owner);
  KILN_RETURN_IF_ERROR(stmt.run());
  if (db_->changes() > 0) return true;
  KILN_RETURN_IF_ERROR(check_exists(id));
  return false;
}

Result<std::vector<OwnedJob>> SqliteJobStore::renew_jobs(const std::string& owner,
                                                         const std::vector<int64_t>& ids,
                                                         double lease_s, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET lease_expires = ? WHERE id = ? AND "
                                     "owner = ? AND state = 'running' RETURNING request"));
  std::vector<OwnedJob> owned;
  for (int64_t id : ids) {
    stmt.reset();
    stmt.bind_all(1, now + lease_s, id, owner);
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) continue;
    const std::string name = stmt.column_text(0);
    KILN_RETURN_IF_ERROR(stmt.run());
    std::optional<JobRequest> request = parse_job_request(name);
    if (!request) return unknown_request(*db_, id, name);
    owned.push_back({id, *request});
  }
  return owned;
}

Result<bool> SqliteJobStore::release_job(int64_t id, const std::string& owner, JobState state,
                                         const std::string& reason, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET state = ?, reason = ?, updated = ?, "
                                     "owner = '', lease_expires = 0, request = '' "
                                     "WHERE id = ? AND owner = ? AND state = 'running'"));
  stmt.bind_all(1, std::string_view(job_state_name(state)), reason, now, id, owner);
  KILN_RETURN_IF_ERROR(stmt.run());
  return db_->changes() > 0;
}

Result<bool> SqliteJobStore::request_job(int64_t id, JobRequest request, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare("UPDATE jobs SET request = ?, updated = ? "
                                                     "WHERE id = ? AND state = 'running'"));
  stmt.bind_all(1, std::string_view(job_request_name(request)), now, id);
  KILN_RETURN_IF_ERROR(stmt.run());
  if (db_->changes() > 0) return true;
  KILN_RETURN_IF_ERROR(check_exists(id));
  return false;
}

Result<bool> SqliteJobStore::change_state(int64_t id, JobState expected, JobState state,
                                          const std::string& reason, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET state = ?, reason = ?, updated = ? "
                                     "WHERE id = ? AND state = ? AND owner = ''"));
  stmt.bind_all(1, std::string_view(job_state_name(state)), reason, now, id,
                std::string_view(job_state_name(expected)));
  KILN_RETURN_IF_ERROR(stmt.run());
  if (db_->changes() > 0) return true;
  KILN_RETURN_IF_ERROR(check_exists(id));
  return false;
}

}  // namespace kiln::store::sqlite
