#include "store/postgres/pg_job_store.h"

#include <algorithm>
#include <string_view>

#include "store/formats/py_json.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_store.h"

namespace kiln::store::postgres {

namespace {

constexpr const char* kPgJobColumns =
    "id, name, spec, base_dir, priority, state, reason, seconds, submitted, updated, owner, "
    "lease_expires, request";

Status unknown_request(const Connection& c, int64_t id, const std::string& name) {
  return InvalidArgument("record store '" + c.display() + "': job " + std::to_string(id) +
                         " has an unknown request '" + name + "'");
}

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
  j.owner = rows.text(i, 10);
  j.lease_expires = rows.real(i, 11);
  const std::string request_name = rows.text(i, 12);
  std::optional<JobRequest> request = parse_job_request(request_name);
  if (!request) return unknown_request(c, j.id, request_name);
  j.request = *request;
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
  // With a commit token: a COMMIT whose acknowledgement was lost is looked up, not repeated (a
  // job submitted once is queued once), and the id is the one the committed attempt returned.
  KILN_RETURN_IF_ERROR(c_->transaction(unique_commit_token(), [&](Tx& tx) -> Status {
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
    KILN_ASSIGN_OR_RETURN(Rows rows,
                          tx.exec("UPDATE jobs SET state = 'queued', updated = $1, owner = '', "
                                  "lease_expires = 0, request = '' WHERE state = 'running'",
                                  {now}));
    n = rows.affected();
    return Status::Ok();
  }));
  return n;
}

// The ownership calls below change at most a few rows and say whether they did. Each runs with a
// commit token: when a COMMIT's acknowledgement is lost, the retry finds the token instead of
// running the body again, so the answer is the committed attempt's (a claim that committed is
// reported as taken, never as refused).

Status PgJobStore::exists_in(Tx& tx, int64_t id) {
  KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec("SELECT 1 FROM jobs WHERE id = $1", {id}));
  return rows.size() > 0 ? Status::Ok() : no_job(id);
}

Result<bool> PgJobStore::claim_job(int64_t id, const std::string& owner, double lease_s,
                                   double now) {
  KILN_RETURN_IF_ERROR(check_writable("claim a job"));
  std::lock_guard<std::mutex> lock(mu_);
  bool claimed = false;
  KILN_RETURN_IF_ERROR(c_->transaction(unique_commit_token(), [&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows, tx.exec("UPDATE jobs SET state = 'running', owner = $1, lease_expires = $2, "
                           "reason = '', updated = $3 WHERE id = $4 AND (state = 'queued' OR "
                           "(state = 'running' AND (lease_expires < $3 OR owner = $1)))",
                           {to_valid_utf8(owner), now + lease_s, now, id}));
    claimed = rows.affected() > 0;
    return claimed ? Status::Ok() : exists_in(tx, id);
  }));
  return claimed;
}

Result<std::vector<OwnedJob>> PgJobStore::renew_jobs(const std::string& owner,
                                                     const std::vector<int64_t>& ids,
                                                     double lease_s, double now) {
  KILN_RETURN_IF_ERROR(check_writable("renew jobs"));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OwnedJob> owned;
  if (ids.empty()) return owned;
  std::string list;
  for (int64_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    owned.clear();
    KILN_ASSIGN_OR_RETURN(
        Rows rows, tx.exec("UPDATE jobs SET lease_expires = $1 WHERE owner = $2 AND "
                           "state = 'running' AND id = ANY($3::bigint[]) RETURNING id, request",
                           {now + lease_s, to_valid_utf8(owner), "{" + list + "}"}));
    for (int i = 0; i < rows.size(); ++i) {
      const std::string name = rows.text(i, 1);
      std::optional<JobRequest> request = parse_job_request(name);
      if (!request) return unknown_request(*c_, rows.integer(i, 0), name);
      owned.push_back({rows.integer(i, 0), *request});
    }
    return Status::Ok();
  }));
  std::sort(owned.begin(), owned.end(),
            [](const OwnedJob& a, const OwnedJob& b) { return a.id < b.id; });
  return owned;
}

Result<bool> PgJobStore::release_job(int64_t id, const std::string& owner, JobState state,
                                     const std::string& reason, double now) {
  KILN_RETURN_IF_ERROR(check_writable("change a job"));
  std::lock_guard<std::mutex> lock(mu_);
  bool released = false;
  KILN_RETURN_IF_ERROR(c_->transaction(unique_commit_token(), [&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows,
        tx.exec("UPDATE jobs SET state = $1, reason = $2, updated = $3, owner = '', "
                "lease_expires = 0, request = '' WHERE id = $4 AND owner = $5 AND "
                "state = 'running'",
                {job_state_name(state), to_valid_utf8(reason), now, id, to_valid_utf8(owner)}));
    released = rows.affected() > 0;
    return Status::Ok();
  }));
  return released;
}

Result<bool> PgJobStore::request_job(int64_t id, JobRequest request, double now) {
  KILN_RETURN_IF_ERROR(check_writable("change a job"));
  std::lock_guard<std::mutex> lock(mu_);
  bool requested = false;
  KILN_RETURN_IF_ERROR(c_->transaction(unique_commit_token(), [&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec("UPDATE jobs SET request = $1, updated = $2 "
                                             "WHERE id = $3 AND state = 'running'",
                                             {job_request_name(request), now, id}));
    requested = rows.affected() > 0;
    return requested ? Status::Ok() : exists_in(tx, id);
  }));
  return requested;
}

Result<bool> PgJobStore::change_state(int64_t id, JobState expected, JobState state,
                                      const std::string& reason, double now) {
  KILN_RETURN_IF_ERROR(check_writable("change a job"));
  std::lock_guard<std::mutex> lock(mu_);
  bool changed = false;
  KILN_RETURN_IF_ERROR(c_->transaction(unique_commit_token(), [&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows,
        tx.exec("UPDATE jobs SET state = $1, reason = $2, updated = $3 "
                "WHERE id = $4 AND state = $5 AND owner = ''",
                {job_state_name(state), to_valid_utf8(reason), now, id, job_state_name(expected)}));
    changed = rows.affected() > 0;
    return changed ? Status::Ok() : exists_in(tx, id);
  }));
  return changed;
}

}  // namespace kiln::store::postgres
