#include "store/job_store.h"

#include <string_view>

#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"

namespace kiln::store {

namespace {

using sqlite::Statement;

constexpr const char* kJobColumns =
    "id, name, spec, base_dir, priority, state, reason, seconds, submitted, updated";

constexpr JobState kStates[] = {JobState::kQueued, JobState::kRunning, JobState::kPaused,
                                JobState::kDone,   JobState::kFailed,  JobState::kCancelled};

Result<JobRow> row_to_job(const sqlite::Database& db, const Statement& row) {
  JobRow j;
  j.id = row.column_int(0);
  j.name = row.column_text(1);
  j.spec = row.column_text(2);
  j.base_dir = row.column_text(3);
  j.priority = row.column_int(4);
  std::optional<JobState> state = parse_job_state(row.column_text(5));
  if (!state) {
    return InvalidArgument("record store '" + db.path() + "': job " + std::to_string(j.id) +
                           " has an unknown state '" + row.column_text(5) + "'");
  }
  j.state = *state;
  j.reason = row.column_text(6);
  j.seconds = row.column_double(7);
  j.submitted = row.column_double(8);
  j.updated = row.column_double(9);
  return j;
}

}  // namespace

const char* job_state_name(JobState s) {
  switch (s) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kPaused:
      return "paused";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::optional<JobState> parse_job_state(const std::string& name) {
  for (JobState s : kStates) {
    if (name == job_state_name(s)) return s;
  }
  return std::nullopt;
}

bool is_final(JobState s) {
  return s == JobState::kDone || s == JobState::kFailed || s == JobState::kCancelled;
}

namespace {
constexpr std::string_view kJobSourcePrefix = "kiln serve job ";
}

std::string job_source(int64_t id) { return std::string(kJobSourcePrefix) + std::to_string(id); }

std::optional<int64_t> job_of_source(const std::string& source) {
  if (source.size() <= kJobSourcePrefix.size() || source.size() > kJobSourcePrefix.size() + 18 ||
      source.compare(0, kJobSourcePrefix.size(), kJobSourcePrefix) != 0) {
    return std::nullopt;
  }
  int64_t id = 0;
  for (size_t i = kJobSourcePrefix.size(); i < source.size(); ++i) {
    if (source[i] < '0' || source[i] > '9') return std::nullopt;
    id = id * 10 + (source[i] - '0');
  }
  return id;
}

JobStore::JobStore(std::unique_ptr<sqlite::Database> db) : db_(std::move(db)) {}
JobStore::~JobStore() = default;

Result<std::unique_ptr<JobStore>> JobStore::open(const std::string& path, bool read_only) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db,
                        open_store_database(path, read_only, RecordStore::kBusyTimeoutMs));
  return std::unique_ptr<JobStore>(new JobStore(std::move(db)));
}

Result<int64_t> JobStore::add(const std::string& name, const std::string& spec,
                              const std::string& base_dir, int64_t priority, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement stmt,
      db_->prepare("INSERT INTO jobs (name, spec, base_dir, priority, state, submitted, updated) "
                   "VALUES (?, ?, ?, ?, 'queued', ?, ?) RETURNING id"));
  stmt.bind(1, name);
  stmt.bind(2, spec);
  stmt.bind(3, base_dir);
  stmt.bind(4, priority);
  stmt.bind(5, now);
  stmt.bind(6, now);
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  if (!row) return IoError("record store '" + db_->path() + "': adding a job returned no id");
  int64_t id = stmt.column_int(0);
  KILN_RETURN_IF_ERROR(stmt.run());
  return id;
}

Result<bool> JobStore::exists(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare("SELECT 1 FROM jobs WHERE id = ?"));
  stmt.bind(1, id);
  return stmt.step();
}

Result<JobRow> JobStore::get(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare(std::string("SELECT ") + kJobColumns +
                                                     " FROM jobs WHERE id = ?"));
  stmt.bind(1, id);
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  if (!row) return InvalidArgument("no job " + std::to_string(id));
  return row_to_job(*db_, stmt);
}

Result<std::vector<JobRow>> JobStore::list() {
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

Status JobStore::set_state(int64_t id, JobState state, const std::string& reason, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET state = ?, reason = ?, updated = ? "
                                     "WHERE id = ?"));
  stmt.bind(1, std::string_view(job_state_name(state)));
  stmt.bind(2, reason);
  stmt.bind(3, now);
  stmt.bind(4, id);
  KILN_RETURN_IF_ERROR(stmt.run());
  if (db_->changes() == 0) return InvalidArgument("no job " + std::to_string(id));
  return Status::Ok();
}

Status JobStore::add_seconds(int64_t id, double seconds, double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET seconds = seconds + ?, updated = ? "
                                     "WHERE id = ?"));
  stmt.bind(1, seconds);
  stmt.bind(2, now);
  stmt.bind(3, id);
  KILN_RETURN_IF_ERROR(stmt.run());
  if (db_->changes() == 0) return InvalidArgument("no job " + std::to_string(id));
  return Status::Ok();
}

Result<int64_t> JobStore::count_records(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("SELECT count(*) FROM records WHERE source = ?"));
  stmt.bind(1, job_source(id));
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  (void)row;  // count(*) always returns a row
  return stmt.column_int(0);
}

Result<int64_t> JobStore::requeue_running(double now) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt,
                        db_->prepare("UPDATE jobs SET state = 'queued', updated = ? "
                                     "WHERE state = 'running'"));
  stmt.bind(1, now);
  KILN_RETURN_IF_ERROR(stmt.run());
  return db_->changes();
}

}  // namespace kiln::store
