#include "store/sqlite/sqlite_job_store.h"

#include <string_view>

#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_store.h"

namespace kiln::store::sqlite {

namespace {

constexpr const char* kJobColumns =
    "id, name, spec, base_dir, priority, state, reason, seconds, submitted, updated";

Result<JobRow> row_to_job(const Database& db, const Statement& row) {
  JobRow j;
  std::string state_name;
  row.read_row(j.id, j.name, j.spec, j.base_dir, j.priority, state_name, j.reason, j.seconds,
               j.submitted, j.updated);
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
                        db_->prepare("UPDATE jobs SET state = 'queued', updated = ? "
                                     "WHERE state = 'running'"));
  stmt.bind(1, now);
  KILN_RETURN_IF_ERROR(stmt.run());
  return db_->changes();
}

}  // namespace kiln::store::sqlite
