// SqliteStore's run_times table (store/run_times.h, schema version 6).
#include "store/formats/py_json.h"
#include "store/record_sql.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/sqlite_store.h"

namespace kiln::store::sqlite {

Status SqliteStore::check_run_times(const RunTimes& delta) const {
  return check_run_times_delta(path(), read_only(), delta);
}

Status SqliteStore::upsert_run_times(const RunTimes& delta) {
  KILN_ASSIGN_OR_RETURN(
      Statement upsert,
      db_->prepare(
          "INSERT INTO run_times (run, target, task_name, workload, source, started, updated, "
          "trials, errors, build_s, run_s, cooldown_s, store_s, wall_s) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
          "ON CONFLICT (run, target, task_name, workload) DO UPDATE SET "
          "source = excluded.source, updated = excluded.updated, "
          "trials = trials + excluded.trials, errors = errors + excluded.errors, "
          "build_s = build_s + excluded.build_s, run_s = run_s + excluded.run_s, "
          "cooldown_s = CASE WHEN excluded.cooldown_s IS NULL THEN cooldown_s "
          "ELSE coalesce(cooldown_s, 0) + excluded.cooldown_s END, "
          "store_s = store_s + excluded.store_s, wall_s = wall_s + excluded.wall_s"));
  upsert.bind_all(1, to_valid_utf8(delta.run), to_valid_utf8(delta.target),
                  to_valid_utf8(delta.task_name), to_valid_utf8(delta.workload),
                  to_valid_utf8(delta.source), delta.started, delta.updated, delta.trials,
                  delta.errors, delta.build_s, delta.run_s, delta.cooldown_s, delta.store_s,
                  delta.wall_s);
  return upsert.run();
}

Status SqliteStore::add_run_times(const RunTimes& delta) {
  KILN_RETURN_IF_ERROR(check_run_times(delta));
  std::lock_guard<std::mutex> lock(mu_);
  return write_transaction([&] { return upsert_run_times(delta); });
}

Result<std::vector<RunTimes>> SqliteStore::run_times(const std::optional<std::string>& source) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql =
      "SELECT run, target, task_name, workload, source, started, updated, trials, errors, "
      "build_s, run_s, cooldown_s, store_s, wall_s FROM run_times";
  if (source) sql += " WHERE source = ?";
  sql += " ORDER BY started, rowid";
  KILN_ASSIGN_OR_RETURN(Statement stmt, db_->prepare(sql));
  if (source) stmt.bind(1, *source);
  std::vector<RunTimes> out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) break;
    RunTimes t;
    stmt.read_row(t.run, t.target, t.task_name, t.workload, t.source, t.started, t.updated,
                  t.trials, t.errors, t.build_s, t.run_s, t.cooldown_s, t.store_s, t.wall_s);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kiln::store::sqlite
