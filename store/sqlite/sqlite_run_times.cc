// RecordStore's run_times table (store/run_times.h, schema version 6).
#include <cmath>

#include "store/formats/py_json.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/sqlite_db.h"

namespace kiln::store {

namespace {

// The first field of `t` that is not a finite non-negative number, or nullptr.
const char* bad_number(const RunTimes& t) {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(t.started)) return "started";
  if (bad(t.updated)) return "updated";
  if (t.trials < 0) return "trials";
  if (t.errors < 0) return "errors";
  if (bad(t.build_s)) return "build_s";
  if (bad(t.run_s)) return "run_s";
  if (t.cooldown_s && bad(*t.cooldown_s)) return "cooldown_s";
  if (bad(t.store_s)) return "store_s";
  if (bad(t.wall_s)) return "wall_s";
  return nullptr;
}

}  // namespace

Status RecordStore::check_run_times(const RunTimes& delta) const {
  KILN_RETURN_IF_ERROR(check_writable("record run times"));
  if (delta.run.empty()) {
    return InvalidArgument("record store '" + path() + "': run times without a run identity");
  }
  if (const char* field = bad_number(delta)) {
    return InvalidArgument("record store '" + path() + "': run times of run '" + delta.run +
                           "': " + field + " is not a finite non-negative number");
  }
  return Status::Ok();
}

Status RecordStore::upsert_run_times(const RunTimes& delta) {
  KILN_ASSIGN_OR_RETURN(
      sqlite::Statement upsert,
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
  upsert.bind(1, to_valid_utf8(delta.run));
  upsert.bind(2, to_valid_utf8(delta.target));
  upsert.bind(3, to_valid_utf8(delta.task_name));
  upsert.bind(4, to_valid_utf8(delta.workload));
  upsert.bind(5, to_valid_utf8(delta.source));
  upsert.bind(6, delta.started);
  upsert.bind(7, delta.updated);
  upsert.bind(8, delta.trials);
  upsert.bind(9, delta.errors);
  upsert.bind(10, delta.build_s);
  upsert.bind(11, delta.run_s);
  if (delta.cooldown_s) {
    upsert.bind(12, *delta.cooldown_s);
  } else {
    upsert.bind_null(12);
  }
  upsert.bind(13, delta.store_s);
  upsert.bind(14, delta.wall_s);
  return upsert.run();
}

void RunTimes::add(const RunTimes& more) {
  trials += more.trials;
  errors += more.errors;
  build_s += more.build_s;
  run_s += more.run_s;
  store_s += more.store_s;
  wall_s += more.wall_s;
  if (cooldown_s && more.cooldown_s) {
    *cooldown_s += *more.cooldown_s;
  } else {
    cooldown_s.reset();
  }
}

Status RecordStore::add_run_times(const RunTimes& delta) {
  KILN_RETURN_IF_ERROR(check_run_times(delta));
  std::lock_guard<std::mutex> lock(mu_);
  return write_transaction([&] { return upsert_run_times(delta); });
}

Result<std::vector<RunTimes>> RecordStore::run_times(const std::optional<std::string>& source) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql =
      "SELECT run, target, task_name, workload, source, started, updated, trials, errors, "
      "build_s, run_s, cooldown_s, store_s, wall_s FROM run_times";
  if (source) sql += " WHERE source = ?";
  sql += " ORDER BY started, rowid";
  KILN_ASSIGN_OR_RETURN(sqlite::Statement stmt, db_->prepare(sql));
  if (source) stmt.bind(1, *source);
  std::vector<RunTimes> out;
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
    if (!row) break;
    RunTimes t;
    t.run = stmt.column_text(0);
    t.target = stmt.column_text(1);
    t.task_name = stmt.column_text(2);
    t.workload = stmt.column_text(3);
    t.source = stmt.column_text(4);
    t.started = stmt.column_double(5);
    t.updated = stmt.column_double(6);
    t.trials = stmt.column_int(7);
    t.errors = stmt.column_int(8);
    t.build_s = stmt.column_double(9);
    t.run_s = stmt.column_double(10);
    if (!stmt.column_is_null(11)) t.cooldown_s = stmt.column_double(11);
    t.store_s = stmt.column_double(12);
    t.wall_s = stmt.column_double(13);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace kiln::store
