#include "store/postgres/pg_store.h"

#include <atomic>

#include "store/formats/py_json.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_schema.h"
#include "store/record_sql.h"

namespace kiln::store::postgres {

namespace {

// The advisory lock key that serializes appends (see pg_store.h: ids in commit order).
constexpr const char* kAppendLock = "SELECT pg_advisory_xact_lock(1802071151)";

constexpr const char* kPgRecordColumns =
    "id, target, task_name, workload, config_index, entities, error_no, costs, all_cost, "
    "timestamp, error_msg, flop, source, measure_options, runner_lost, measure_version";

Result<Record> pg_row_to_record(const Connection& c, const Rows& rows, int i) {
  Record r;
  r.id = rows.integer(i, 0);
  r.target = rows.text(i, 1);
  r.task_name = rows.text(i, 2);
  r.workload = rows.text(i, 3);
  r.config_index = rows.integer(i, 4);
  const std::string entities = rows.text(i, 5);
  r.error_no = static_cast<int>(rows.integer(i, 6));
  const std::string costs_text = rows.text(i, 7);
  r.all_cost = rows.real(i, 8);
  r.timestamp = rows.real(i, 9);
  r.error_msg = rows.text(i, 10);
  r.flop = rows.real(i, 11);
  r.source = rows.text(i, 12);
  r.measure_options = rows.text(i, 13);
  r.runner_lost = rows.integer(i, 14) != 0;
  r.measure_version = static_cast<int>(rows.integer(i, 15));
  KILN_RETURN_IF_ERROR(decode_json_columns(c.display(), entities, costs_text, r));
  return r;
}

Result<std::vector<Record>> pg_collect(const Connection& c, const Rows& rows) {
  std::vector<Record> out;
  out.reserve(rows.size());
  for (int i = 0; i < rows.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Record r, pg_row_to_record(c, rows, i));
    out.push_back(std::move(r));
  }
  return out;
}

// " WHERE ..." of a filter with $n placeholders, and its parameters in order.
struct PgWhere {
  std::string sql;
  std::vector<Param> params;
};

PgWhere pg_where_of(const RecordFilter& f) {
  PgWhere w;
  w.params.emplace_back(f.after_id);
  w.sql = " WHERE id > $1";
  auto add = [&](const char* column, const std::optional<std::string>& value) {
    if (!value) return;
    w.params.emplace_back(*value);
    w.sql += std::string(" AND ") + column + " = $" + std::to_string(w.params.size());
  };
  add("target", f.target);
  add("task_name", f.task_name);
  add("workload", f.workload);
  add("source", f.source);
  if (f.only_ok) w.sql += " AND error_no = 0";
  if (f.versions == Versions::kComparable) w.sql += " AND " + comparable_sql();
  if (f.versions == Versions::kOutdated) w.sql += " AND NOT " + comparable_sql();
  return w;
}

constexpr const char* kUpsertRunTimes =
    "INSERT INTO run_times (run, target, task_name, workload, source, started, updated, trials, "
    "errors, build_s, run_s, cooldown_s, store_s, wall_s) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
    "ON CONFLICT (run, target, task_name, workload) DO UPDATE SET "
    "source = excluded.source, updated = excluded.updated, "
    "trials = run_times.trials + excluded.trials, errors = run_times.errors + excluded.errors, "
    "build_s = run_times.build_s + excluded.build_s, run_s = run_times.run_s + excluded.run_s, "
    "cooldown_s = CASE WHEN excluded.cooldown_s IS NULL THEN run_times.cooldown_s "
    "ELSE coalesce(run_times.cooldown_s, 0) + excluded.cooldown_s END, "
    "store_s = run_times.store_s + excluded.store_s, wall_s = run_times.wall_s + excluded.wall_s";

Status upsert_run_times(Tx& tx, const RunTimes& t) {
  return tx
      .exec(kUpsertRunTimes,
            {to_valid_utf8(t.run), to_valid_utf8(t.target), to_valid_utf8(t.task_name),
             to_valid_utf8(t.workload), to_valid_utf8(t.source), t.started, t.updated, t.trials,
             t.errors, t.build_s, t.run_s, t.cooldown_s, t.store_s, t.wall_s})
      .status();
}

}  // namespace

Result<std::unique_ptr<Connection>> open_store_connection(const std::string& uri, bool read_only) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c,
                        Connection::open(uri, redact_password(uri), read_only));
  KILN_RETURN_IF_ERROR(prepare_schema(*c, read_only));
  if (!read_only) KILN_RETURN_IF_ERROR(c->prune_commit_tokens());
  return c;
}

PgStore::PgStore(std::unique_ptr<Connection> c) : c_(std::move(c)) {}
PgStore::~PgStore() = default;

Result<std::unique_ptr<PgStore>> PgStore::open(const std::string& uri, bool read_only) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, open_store_connection(uri, read_only));
  return std::unique_ptr<PgStore>(new PgStore(std::move(c)));
}

const std::string& PgStore::path() const { return c_->display(); }
bool PgStore::read_only() const { return c_->read_only(); }

Result<int64_t> PgStore::schema_version() {
  std::lock_guard<std::mutex> lock(mu_);
  return read_schema_version(*c_);
}

Status PgStore::check_writable(const char* what) const {
  if (!read_only()) return Status::Ok();
  return InvalidArgument("record store '" + path() + "': opened read-only, cannot " + what);
}

Status PgStore::check_run_times(const RunTimes& delta) const {
  return check_run_times_delta(path(), read_only(), delta);
}

Status PgStore::append(const std::vector<Record>& batch, const std::string& lease_owner,
                       const RunTimes* run_times) {
  KILN_RETURN_IF_ERROR(check_writable("append"));
  if (run_times) KILN_RETURN_IF_ERROR(check_run_times(*run_times));
  KILN_RETURN_IF_ERROR(validate_batch(path(), batch));
  if (batch.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return c_->transaction(unique_commit_token(), [&](Tx& tx) -> Status {
    KILN_RETURN_IF_ERROR(tx.exec(kAppendLock).status());
    for (const Record& r : batch) {
      std::optional<double> mean_cost;
      if (r.error_no == static_cast<int>(MeasureError::kNoError)) mean_cost = r.mean_cost();
      KILN_RETURN_IF_ERROR(
          tx.exec("INSERT INTO records (target, task_name, workload, config_index, entities, "
                  "error_no, costs, mean_cost, all_cost, timestamp, error_msg, flop, source, "
                  "measure_options, runner_lost, measure_version) VALUES ($1, $2, $3, $4, $5, "
                  "$6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
                  {r.target, r.task_name, r.workload, r.config_index, r.entities.dump(), r.error_no,
                   nlohmann::json(r.costs).dump(), mean_cost, r.all_cost, r.timestamp,
                   to_valid_utf8(r.error_msg), r.flop, to_valid_utf8(r.source), r.measure_options,
                   r.runner_lost, r.measure_version})
              .status());
      if (lease_owner.empty()) continue;
      KILN_RETURN_IF_ERROR(tx.exec("DELETE FROM leases WHERE target = $1 AND task_name = $2 AND "
                                   "workload = $3 AND config_index = $4 AND owner = $5",
                                   {r.target, r.task_name, r.workload, r.config_index, lease_owner})
                               .status());
    }
    return run_times ? upsert_run_times(tx, *run_times) : Status::Ok();
  });
}

Result<std::vector<Record>> PgStore::records(const RecordFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  PgWhere w = pg_where_of(filter);
  std::string sql =
      std::string("SELECT ") + kPgRecordColumns + " FROM records" + w.sql + " ORDER BY id";
  if (filter.limit) {
    w.params.emplace_back(*filter.limit);
    sql += " LIMIT $" + std::to_string(w.params.size());
  }
  std::vector<Record> out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec(sql, w.params));
    KILN_ASSIGN_OR_RETURN(out, pg_collect(*c_, rows));
    return Status::Ok();
  }));
  return out;
}

Result<int64_t> PgStore::count(const RecordFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  PgWhere w = pg_where_of(filter);
  int64_t n = 0;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec("SELECT count(*) FROM records" + w.sql, w.params));
    n = rows.integer(0, 0);
    return Status::Ok();
  }));
  return n;
}

Result<std::optional<Record>> PgStore::best(const std::string& target, const std::string& task_name,
                                            const std::string& workload) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Record> out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(
        Rows rows, tx.exec(std::string("SELECT ") + kPgRecordColumns +
                               " FROM records WHERE target = $1 AND task_name = $2 AND "
                               "workload = $3 AND error_no = 0 AND mean_cost IS NOT NULL AND " +
                               comparable_sql() + " ORDER BY mean_cost, id LIMIT 1",
                           {target, task_name, workload}));
    KILN_ASSIGN_OR_RETURN(std::vector<Record> found, pg_collect(*c_, rows));
    out.reset();
    if (!found.empty()) out = std::move(found.front());
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<Record>> PgStore::best_per_workload(const std::optional<std::string>& target) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = std::string("SELECT ") + kPgRecordColumns +
                    " FROM (SELECT *, row_number() OVER (PARTITION BY target, task_name, "
                    "workload ORDER BY mean_cost, id) AS pos FROM records WHERE error_no = 0 "
                    "AND mean_cost IS NOT NULL AND " +
                    comparable_sql() + (target ? " AND target = $1" : "") +
                    ") AS ranked WHERE pos = 1 ORDER BY id";
  std::vector<Param> params;
  if (target) params.emplace_back(*target);
  std::vector<Record> out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec(sql, params));
    KILN_ASSIGN_OR_RETURN(out, pg_collect(*c_, rows));
    return Status::Ok();
  }));
  return out;
}

Result<std::set<int64_t>> PgStore::measured_indices(const std::string& target,
                                                    const std::string& task_name,
                                                    const std::string& workload) {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<int64_t> out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows,
                          tx.exec("SELECT DISTINCT config_index FROM records WHERE target = $1 AND "
                                  "task_name = $2 AND workload = $3 AND " +
                                      comparable_sql(),
                                  {target, task_name, workload}));
    out.clear();
    for (int i = 0; i < rows.size(); ++i) out.insert(rows.integer(i, 0));
    return Status::Ok();
  }));
  return out;
}

Result<Claim> PgStore::claim(const TaskKey& task, const std::vector<int64_t>& configs,
                             int64_t after_id, const std::string& owner, double now,
                             double expires) {
  KILN_RETURN_IF_ERROR(check_writable("claim configs"));
  if (owner.empty()) return InvalidArgument("record store '" + path() + "': empty lease owner");
  std::lock_guard<std::mutex> lock(mu_);
  Claim out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    out = Claim{};
    KILN_RETURN_IF_ERROR(tx.exec("DELETE FROM leases WHERE target = $1 AND task_name = $2 AND "
                                 "workload = $3 AND expires <= $4",
                                 {task.target, task.task_name, task.workload, now})
                             .status());
    // Takes the config unless another owner holds it; the owner's own lease is renewed. A
    // concurrent claimer of the same config waits here for this transaction's end.
    for (int64_t config : configs) {
      KILN_ASSIGN_OR_RETURN(
          Rows taken,
          tx.exec("INSERT INTO leases (target, task_name, workload, config_index, owner, expires) "
                  "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (target, task_name, workload, "
                  "config_index) DO UPDATE SET expires = excluded.expires "
                  "WHERE leases.owner = excluded.owner",
                  {task.target, task.task_name, task.workload, config, owner, expires}));
      if (taken.affected() > 0) out.claimed.push_back(config);
    }
    // The records last, in a statement of its own (a snapshot taken now, READ COMMITTED): a
    // record appended by the owner of a lease taken above was committed before that lease was
    // released, so it is seen here; read first, it could be missed while its config is claimed.
    KILN_ASSIGN_OR_RETURN(Rows unseen,
                          tx.exec(std::string("SELECT ") + kPgRecordColumns +
                                      " FROM records WHERE target = $1 AND task_name = $2 AND "
                                      "workload = $3 AND id > $4 ORDER BY id",
                                  {task.target, task.task_name, task.workload, after_id}));
    KILN_ASSIGN_OR_RETURN(out.unseen, pg_collect(*c_, unseen));
    return Status::Ok();
  }));
  return out;
}

Status PgStore::renew_leases(const std::string& owner, double expires) {
  KILN_RETURN_IF_ERROR(check_writable("renew leases"));
  std::lock_guard<std::mutex> lock(mu_);
  return c_->transaction([&](Tx& tx) {
    return tx.exec("UPDATE leases SET expires = $1 WHERE owner = $2", {expires, owner}).status();
  });
}

Status PgStore::release_leases(const TaskKey& task, const std::vector<int64_t>& configs,
                               const std::string& owner) {
  KILN_RETURN_IF_ERROR(check_writable("release leases"));
  if (configs.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return c_->transaction([&](Tx& tx) -> Status {
    for (int64_t config : configs) {
      KILN_RETURN_IF_ERROR(tx.exec("DELETE FROM leases WHERE target = $1 AND task_name = $2 AND "
                                   "workload = $3 AND config_index = $4 AND owner = $5",
                                   {task.target, task.task_name, task.workload, config, owner})
                               .status());
    }
    return Status::Ok();
  });
}

Result<std::vector<Lease>> PgStore::leases(const TaskKey& task) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Lease> out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows,
                          tx.exec("SELECT config_index, owner, expires FROM leases WHERE target = "
                                  "$1 AND task_name = $2 AND workload = $3 ORDER BY config_index",
                                  {task.target, task.task_name, task.workload}));
    out.clear();
    for (int i = 0; i < rows.size(); ++i) {
      out.push_back(Lease{rows.integer(i, 0), rows.text(i, 1), rows.real(i, 2)});
    }
    return Status::Ok();
  }));
  return out;
}

Status PgStore::add_run_times(const RunTimes& delta) {
  KILN_RETURN_IF_ERROR(check_run_times(delta));
  std::lock_guard<std::mutex> lock(mu_);
  return c_->transaction(unique_commit_token(),
                         [&](Tx& tx) { return upsert_run_times(tx, delta); });
}

Result<std::vector<RunTimes>> PgStore::run_times(const std::optional<std::string>& source) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql =
      "SELECT run, target, task_name, workload, source, started, updated, trials, errors, "
      "build_s, run_s, cooldown_s, store_s, wall_s FROM run_times";
  std::vector<Param> params;
  if (source) {
    sql += " WHERE source = $1";
    params.emplace_back(*source);
  }
  sql += " ORDER BY started, seq";
  std::vector<RunTimes> out;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec(sql, params));
    out.clear();
    for (int i = 0; i < rows.size(); ++i) {
      RunTimes t;
      t.run = rows.text(i, 0);
      t.target = rows.text(i, 1);
      t.task_name = rows.text(i, 2);
      t.workload = rows.text(i, 3);
      t.source = rows.text(i, 4);
      t.started = rows.real(i, 5);
      t.updated = rows.real(i, 6);
      t.trials = rows.integer(i, 7);
      t.errors = rows.integer(i, 8);
      t.build_s = rows.real(i, 9);
      t.run_s = rows.real(i, 10);
      if (!rows.is_null(i, 11)) t.cooldown_s = rows.real(i, 11);
      t.store_s = rows.real(i, 12);
      t.wall_s = rows.real(i, 13);
      out.push_back(std::move(t));
    }
    return Status::Ok();
  }));
  return out;
}

Status PgStore::check_integrity() {
  std::lock_guard<std::mutex> lock(mu_);
  // The server keeps its own pages consistent; what kiln can check is its own invariants.
  std::string problems;
  KILN_RETURN_IF_ERROR(c_->transaction([&](Tx& tx) -> Status {
    problems.clear();
    KILN_ASSIGN_OR_RETURN(
        Rows bad_mean,
        tx.exec("SELECT count(*) FROM records WHERE (error_no = 0) <> (mean_cost IS NOT NULL)"));
    if (bad_mean.integer(0, 0) > 0) {
      problems += std::to_string(bad_mean.integer(0, 0)) +
                  " records whose mean_cost disagrees with their error_no";
    }
    return Status::Ok();
  }));
  if (problems.empty()) return Status::Ok();
  return InvalidArgument("record store '" + path() + "': integrity check failed: " + problems);
}

}  // namespace kiln::store::postgres
