#include "store/sqlite/sqlite_store.h"

#include <utility>

#include "store/formats/py_json.h"
#include "store/record_sql.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"

namespace kiln::store::sqlite {

namespace {

// The columns read back into a Record, in this order (row_to_record depends on it).
constexpr const char* kRecordColumns =
    "id, target, task_name, workload, config_index, entities, error_no, costs, all_cost, "
    "timestamp, error_msg, flop, source, measure_options, runner_lost, measure_version";

std::string costs_json(const std::vector<double>& costs) {
  // nlohmann prints doubles with the shortest text that reads back to the same value.
  return nlohmann::json(costs).dump();
}

Result<Record> row_to_record(const Database& db, const Statement& row) {
  Record r;
  std::string entities;
  std::string costs_text;
  row.read_row(r.id, r.target, r.task_name, r.workload, r.config_index, entities, r.error_no,
               costs_text, r.all_cost, r.timestamp, r.error_msg, r.flop, r.source,
               r.measure_options, r.runner_lost, r.measure_version);
  KILN_RETURN_IF_ERROR(decode_json_columns(db.path(), entities, costs_text, r));
  return r;
}

Result<std::vector<Record>> collect(const Database& db, Statement& stmt) {
  std::vector<Record> out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) return out;
    KILN_ASSIGN_OR_RETURN(Record r, row_to_record(db, stmt));
    out.push_back(std::move(r));
  }
}

// " WHERE ..." for a filter, and the values to bind in order.
struct WhereClause {
  std::string sql;
  std::vector<std::string> text_args;  // bound first, in order
  int64_t after_id = 0;                // bound after the text arguments
};

WhereClause where_of(const RecordFilter& f) {
  WhereClause w;
  std::string sql = " WHERE id > ?";
  auto add = [&](const char* column, const std::optional<std::string>& value) {
    if (!value) return;
    sql += std::string(" AND ") + column + " = ?";
    w.text_args.push_back(*value);
  };
  add("target", f.target);
  add("task_name", f.task_name);
  add("workload", f.workload);
  add("source", f.source);
  if (f.only_ok) sql += " AND error_no = 0";
  if (f.versions == Versions::kComparable) sql += " AND " + comparable_sql();
  if (f.versions == Versions::kOutdated) sql += " AND NOT " + comparable_sql();
  w.sql = std::move(sql);
  w.after_id = f.after_id;
  return w;
}

// Binds a WhereClause's values starting at parameter 1; returns the next free parameter index.
int bind_where(Statement& stmt, const WhereClause& w) {
  int i = 1;
  stmt.bind(i++, w.after_id);
  for (const std::string& v : w.text_args) stmt.bind(i++, v);
  return i;
}

}  // namespace

SqliteStore::SqliteStore(std::unique_ptr<Database> db) : db_(std::move(db)) {}
SqliteStore::~SqliteStore() = default;

const std::string& SqliteStore::path() const { return db_->path(); }
bool SqliteStore::read_only() const { return db_->read_only(); }

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path, bool read_only) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Database> db,
                        open_store_database(path, read_only, kBusyTimeoutMs));
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(db)));
}

Result<int64_t> SqliteStore::schema_version() {
  std::lock_guard<std::mutex> lock(mu_);
  return db_->query_int("PRAGMA user_version");
}

Status SqliteStore::check_writable(const char* what) const {
  if (!db_->read_only()) return Status::Ok();
  return InvalidArgument("record store '" + path() + "': opened read-only, cannot " + what);
}

Status SqliteStore::write_transaction(const std::function<Status()>& body) {
  // IMMEDIATE: take the write lock up front, so that waiting for another writer happens here
  // (under busy_timeout) rather than failing midway.
  KILN_RETURN_IF_ERROR(db_->exec("BEGIN IMMEDIATE"));
  Status s = body();
  if (!s.ok()) {
    (void)db_->exec("ROLLBACK");
    return s;
  }
  s = db_->exec("COMMIT");
  if (!s.ok()) (void)db_->exec("ROLLBACK");
  return s;
}

Status SqliteStore::append(const std::vector<Record>& batch, const std::string& lease_owner,
                           const RunTimes* run_times) {
  KILN_RETURN_IF_ERROR(check_writable("append"));
  if (run_times) KILN_RETURN_IF_ERROR(check_run_times(*run_times));
  KILN_RETURN_IF_ERROR(validate_batch(path(), batch));
  if (batch.empty()) return Status::Ok();

  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement insert,
      db_->prepare("INSERT INTO records (target, task_name, workload, config_index, entities, "
                   "error_no, costs, mean_cost, all_cost, timestamp, error_msg, flop, source, "
                   "measure_options, runner_lost, measure_version) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  KILN_ASSIGN_OR_RETURN(
      Statement release,
      db_->prepare("DELETE FROM leases WHERE target = ? AND task_name = ? AND workload = ? AND "
                   "config_index = ? AND owner = ?"));
  return write_transaction([&]() -> Status {
    for (const Record& r : batch) {
      insert.reset();
      // mean_cost is NULL for failures, so that "best" never sees them.
      std::optional<double> mean_cost;
      if (r.error_no == static_cast<int>(MeasureError::kNoError)) mean_cost = r.mean_cost();
      // entities is valid JSON and measure_options valid UTF-8: validate_record checked them.
      insert.bind_all(1, r.target, r.task_name, r.workload, r.config_index, r.entities.dump(),
                      r.error_no, costs_json(r.costs), mean_cost, r.all_cost, r.timestamp,
                      to_valid_utf8(r.error_msg), r.flop, to_valid_utf8(r.source),
                      r.measure_options, r.runner_lost, r.measure_version);
      KILN_RETURN_IF_ERROR(insert.run());
      if (lease_owner.empty()) continue;
      release.reset();
      release.bind_all(1, r.target, r.task_name, r.workload, r.config_index, lease_owner);
      KILN_RETURN_IF_ERROR(release.run());
    }
    return run_times ? upsert_run_times(*run_times) : Status::Ok();
  });
}

Result<std::vector<Record>> SqliteStore::records(const RecordFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  WhereClause w = where_of(filter);
  std::string sql =
      std::string("SELECT ") + kRecordColumns + " FROM records" + w.sql + " ORDER BY id";
  if (filter.limit) sql += " LIMIT ?";
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare(sql));
  int next = bind_where(stmt, w);
  if (filter.limit) stmt.bind(next, *filter.limit);
  return collect(*db_, stmt);
}

Result<int64_t> SqliteStore::count(const RecordFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  WhereClause w = where_of(filter);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare("SELECT count(*) FROM records" + w.sql));
  bind_where(stmt, w);
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  return row ? stmt.column_int(0) : 0;
}

Result<std::optional<Record>> SqliteStore::best(const std::string& target,
                                                const std::string& task_name,
                                                const std::string& workload) {
  std::lock_guard<std::mutex> lock(mu_);
  // The index on (target, task_name, workload, mean_cost) ends with the rowid, so this is one
  // index seek; "id" breaks ties toward the earliest record.
  KILN_ASSIGN_OR_RETURN(
      Statement stmt,
      db_->prepare(std::string("SELECT ") + kRecordColumns +
                   " FROM records WHERE target = ? AND task_name = ? AND workload = ? AND "
                   "error_no = 0 AND mean_cost IS NOT NULL AND " +
                   comparable_sql() + " ORDER BY mean_cost, id LIMIT 1"));
  stmt.bind_all(1, target, task_name, workload);
  KILN_ASSIGN_OR_RETURN(std::vector<Record> rows, collect(*db_, stmt));
  if (rows.empty()) return std::optional<Record>();
  return std::optional<Record>(std::move(rows.front()));
}

Result<std::vector<Record>> SqliteStore::best_per_workload(
    const std::optional<std::string>& target) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string("SELECT ") + kRecordColumns +
                    " FROM (SELECT *, row_number() OVER (PARTITION BY target, task_name, "
                    "workload ORDER BY mean_cost, id) AS pos FROM records WHERE error_no = 0 "
                    "AND mean_cost IS NOT NULL AND " +
                    comparable_sql() + (target ? " AND target = ?" : "") +
                    ") WHERE pos = 1 ORDER BY id";
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare(sql));
  if (target) stmt.bind(1, *target);
  return collect(*db_, stmt);
}

Result<std::set<int64_t>> SqliteStore::measured_indices(const std::string& target,
                                                        const std::string& task_name,
                                                        const std::string& workload) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement stmt,
      db_->prepare("SELECT DISTINCT config_index FROM records WHERE target = ? AND task_name = ? "
                   "AND workload = ? AND " +
                   comparable_sql()));
  stmt.bind_all(1, target, task_name, workload);
  std::set<int64_t> out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) return out;
    out.insert(stmt.column_int(0));
  }
}

namespace {

// Binds a TaskKey to parameters 1..3.
void bind_task(Statement& stmt, const TaskKey& task) {
  stmt.bind_all(1, task.target, task.task_name, task.workload);
}

}  // namespace

Result<Claim> SqliteStore::claim(const TaskKey& task, const std::vector<int64_t>& configs,
                                 int64_t after_id, const std::string& owner, double now,
                                 double expires) {
  KILN_RETURN_IF_ERROR(check_writable("claim configs"));
  if (owner.empty()) return InvalidArgument("record store '" + path() + "': empty lease owner");
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement unseen,
      db_->prepare(std::string("SELECT ") + kRecordColumns +
                   " FROM records WHERE target = ? AND task_name = ? AND workload = ? AND "
                   "id > ? ORDER BY id"));
  KILN_ASSIGN_OR_RETURN(Statement expire,
                        db_->prepare("DELETE FROM leases WHERE target = ? AND task_name = ? AND "
                                     "workload = ? AND expires <= ?"));
  // Takes the config unless another owner holds it; the owner's own lease is renewed.
  KILN_ASSIGN_OR_RETURN(
      Statement take,
      db_->prepare("INSERT INTO leases (target, task_name, workload, config_index, owner, "
                   "expires) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (target, task_name, workload, "
                   "config_index) DO UPDATE SET expires = "
                   "excluded.expires WHERE owner = excluded.owner"));
  Claim out;
  Status s = write_transaction([&]() -> Status {
    bind_task(unseen, task);
    unseen.bind(4, after_id);
    KILN_ASSIGN_OR_RETURN(out.unseen, collect(*db_, unseen));
    bind_task(expire, task);
    expire.bind(4, now);
    KILN_RETURN_IF_ERROR(expire.run());
    for (int64_t config : configs) {
      take.reset();
      take.bind_all(1, task.target, task.task_name, task.workload, config, owner, expires);
      KILN_RETURN_IF_ERROR(take.run());
      if (db_->changes() > 0) out.claimed.push_back(config);
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

Status SqliteStore::renew_leases(const std::string& owner, double expires) {
  KILN_RETURN_IF_ERROR(check_writable("renew leases"));
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement renew,
                        db_->prepare("UPDATE leases SET expires = ? WHERE owner = ?"));
  renew.bind_all(1, expires, owner);
  return write_transaction([&] { return renew.run(); });
}

Status SqliteStore::release_leases(const TaskKey& task, const std::vector<int64_t>& configs,
                                   const std::string& owner) {
  KILN_RETURN_IF_ERROR(check_writable("release leases"));
  if (configs.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement release,
      db_->prepare("DELETE FROM leases WHERE target = ? AND task_name = ? AND workload = ? AND "
                   "config_index = ? AND owner = ?"));
  return write_transaction([&]() -> Status {
    for (int64_t config : configs) {
      release.reset();
      release.bind_all(1, task.target, task.task_name, task.workload, config, owner);
      KILN_RETURN_IF_ERROR(release.run());
    }
    return Status::Ok();
  });
}

Result<std::vector<Lease>> SqliteStore::leases(const TaskKey& task) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(
      Statement stmt,
      db_->prepare("SELECT config_index, owner, expires FROM leases WHERE target = ? AND "
                   "task_name = ? AND workload = ? ORDER BY config_index"));
  bind_task(stmt, task);
  std::vector<Lease> out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) return out;
    Lease lease;
    stmt.read_row(lease.config_index, lease.owner, lease.expires);
    out.push_back(std::move(lease));
  }
}

Status SqliteStore::check_integrity() {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare("PRAGMA integrity_check"));
  std::string problems;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) break;
    std::string line = stmt.column_text(0);
    if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
  }
  if (problems.empty()) return Status::Ok();
  return InvalidArgument("record store '" + path() + "': integrity check failed: " + problems);
}

}  // namespace kiln::store::sqlite
