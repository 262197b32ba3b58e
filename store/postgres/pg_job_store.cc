#include "store/postgres/pg_job_store.h"

#include <string_view>

#include "store/formats/py_json.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_store.h"

namespace kiln::store::postgres {

namespace {

constexpr const char* kPgJobColumns =
    "id, name, spec, base_dir, priority, state, reason, seconds, submitted, updated";

Result<JobRow> pg_row_to_job(const Connection& c, const Rows& rows, int i) {
  JobRow j;
  j.id = rows.integer(i, 0);
  j.name = rows.text(i, 1);
  j.spec = rows.text(i, 2);
  j.base_dir = rows.text(i, 3);
  j.priority = rows.integer(i, 4);
  const std::string state_name = rows.text(i, 5);
  j.reason = rows.text(i, 6);
  j.seconds = rows.real(i, 7);
  j.submitted = rows.real(i, 8);
  j.updated = rows.real(i, 9);
  std::optional<JobState> state = parse_job_state(state_name);
  if (!state) {
    return InvalidArgument("record store '" + c.display() + "': job " + std::to_string(j.id) +
                           " has an unknown state '" + state_name + "'");
  }
  j.state = *state;
  return j;
}

Status no_job(int64_t id) { return InvalidArgument("no job " + std::to_string(id)); }

}  // namespace

PgJobStore::PgJobStore(std::unique_ptr<Connection> c) : c_(std::move(c)) {}
PgJobStore::~PgJobStore() = default;

Result<std::unique_ptr<PgJobStore>> PgJobStore::open(const std::string& uri, bool read_only) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, open_store_connection(uri, read_only));
  return std::unique_ptr<PgJobStore>(new PgJobStore(std::move(c)));
}

Status PgJobStore::check_writable(const char* what) const {
  if (!c_->read_only()) return Status::Ok();
  return InvalidArgument("record store '" + c_->display() + "': opened read-only, cannot " + what);
}

Result<int64_t> PgJobStore::add(const std::string& name, const std::string& spec,
                                const std::string& base_dir, int64_t priority, double now) {
  KILN_RETURN_IF_ERROR(check_writable("add a job"));
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows,
        tx.exec(
            "INSERT INTO jobs (name, spec, base_dir, priority, state, submitted, updated) "
            "VALUES ($1, $2, $3, $4, 'queued', $5, $5) RETURNING id",
            {to_valid_utf8(name), to_valid_utf8(spec), to_valid_utf8(base_dir), priority, now}));
    id = rows.integer(0, 0);
    return Status::Ok();
  }));
  return id;
}

Result<bool> PgJobStore::exists(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  bool found = false;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec("SELECT 1 FROM jobs WHERE id = $1", {id}));
    found = rows.size() > 0;
    return Status::Ok();
  }));
  return found;
}

Result<JobRow> PgJobStore::get(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  JobRow job;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows,
        tx.exec(std::string("SELECT ") + kPgJobColumns + " FROM jobs WHERE id = $1", {id}));
    if (rows.size() == 0) return no_job(id);
    KILN_ASSIGN_OR_RETURN(job, pg_row_to_job(*c_, rows, 0));
    return Status::Ok();
  }));
  return job;
}

Result<std::vector<JobRow>> PgJobStore::list() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JobRow> out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows, tx.exec(std::string("SELECT ") + kPgJobColumns + " FROM jobs ORDER BY id"));
    out.clear();
    for (int i = 0; i < rows.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(JobRow j, pg_row_to_job(*c_, rows, i));
      out.push_back(std::move(j));
    }
    return Status::Ok();
  }));
  return out;
}

Status PgJobStore::set_state(int64_t id, JobState state, const std::string& reason, double now) {
  KILN_RETURN_IF_ERROR(check_writable("change a job"));
  std::lock_guard<std::mutex> lock(mu_);
  return c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows,
                          tx.exec("UPDATE jobs SET state = $1, reason = $2, updated = $3 "
                                  "WHERE id = $4",
                                  {job_state_name(state), to_valid_utf8(reason), now, id}));
    return rows.affected() == 0 ? no_job(id) : Status::Ok();
  });
}

Status PgJobStore::add_seconds(int64_t id, double seconds, double now) {
  KILN_RETURN_IF_ERROR(check_writable("change a job"));
  std::lock_guard<std::mutex> lock(mu_);
  return c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec("UPDATE jobs SET seconds = seconds + $1, updated = $2 "
                                             "WHERE id = $3",
                                             {seconds, now, id}));
    return rows.affected() == 0 ? no_job(id) : Status::Ok();
  });
}

Result<int64_t> PgJobStore::count_records(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows, tx.exec("SELECT count(*) FROM records WHERE source = $1", {job_source(id)}));
    n = rows.integer(0, 0);
    return Status::Ok();
  }));
  return n;
}

Result<int64_t> PgJobStore::requeue_running(double now) {
  KILN_RETURN_IF_ERROR(check_writable("requeue jobs"));
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec("UPDATE jobs SET state = 'queued', updated = $1 "
                                             "WHERE state = 'running'",
                                             {now}));
    n = rows.affected();
    return Status::Ok();
  }));
  return n;
}

}  // namespace kiln::store::postgres
