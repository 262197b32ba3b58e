#include "store/sqlite/schema.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace kiln::store {

namespace {

// Version 1. Records are append-only (DESIGN.md): triggers refuse UPDATE and DELETE so that no
// tool, not even a hand-typed sqlite3 session, rewrites history by accident. mean_cost is stored
// (NULL for failures) so that "best" is an index range scan on (target, task, workload, cost).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE records (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  target TEXT NOT NULL,
  task_name TEXT NOT NULL,
  workload TEXT NOT NULL,
  config_index INTEGER NOT NULL,
  entities TEXT NOT NULL,
  error_no INTEGER NOT NULL,
  costs TEXT NOT NULL,
  mean_cost REAL,
  all_cost REAL NOT NULL,
  timestamp REAL NOT NULL,
  error_msg TEXT NOT NULL,
  flop REAL NOT NULL,
  source TEXT NOT NULL
);
CREATE INDEX records_by_workload_cost ON records (target, task_name, workload, mean_cost);
CREATE TRIGGER records_no_update BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'kiln records are append-only'); END;
CREATE TRIGGER records_no_delete BEFORE DELETE ON records
  BEGIN SELECT RAISE(ABORT, 'kiln records are append-only'); END;
)sql";

// Version 2. Each record carries the measure options it ran under (canonical JSON text, '' when
// unknown: every record from version 1) and whether the runner itself was lost, so that a
// failure caused by the environment can be measured again (tuner/tune_loop.h). ADD COLUMN
// rewrites no row, so the append-only triggers are not involved and every record is kept.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE records ADD COLUMN measure_options TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN runner_lost INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 3. Leases: a tuner claims the configs it is about to build, so that concurrent tuners
// of one task never measure a config twice (Store::claim). Unlike records, leases are
// mutable: they are renewed, released when the config's record is appended, and expire so that
// a killed tuner's claims stop blocking. `expires` is unix seconds.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE leases (
  target TEXT NOT NULL,
  task_name TEXT NOT NULL,
  workload TEXT NOT NULL,
  config_index INTEGER NOT NULL,
  owner TEXT NOT NULL,
  expires REAL NOT NULL,
  PRIMARY KEY (target, task_name, workload, config_index)
);
CREATE INDEX leases_by_owner ON leases (owner);
)sql";

// Version 4. Each record carries the version of the measurement semantics it was measured under
// (ops/measured_layout.h: kMeasureVersion). Every record before this version was measured under
// version 1 (the NCHWc convolutions timed with NCHW data in and the NCHW write-back), so that is
// the column's default: ADD COLUMN rewrites no row and every record is kept as it was.
constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE records ADD COLUMN measure_version INTEGER NOT NULL DEFAULT 1;
)sql";

// Version 5. The daemon's jobs (store/job_store.h): the spec as submitted, its state, priority
// and the time spent on it so far. Unlike records, jobs are mutable. A job's records carry its
// source (job_source), indexed so that a job's trials are counted exactly from what is committed.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  base_dir TEXT NOT NULL,
  priority INTEGER NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  seconds REAL NOT NULL DEFAULT 0,
  submitted REAL NOT NULL,
  updated REAL NOT NULL
);
CREATE INDEX records_by_source ON records (source);
)sql";

// Version 6. Where each tuning run's time went, per task (store/run_times.h): one row per (run,
// task), added to after every committed batch, so that a killed run still shows what it spent.
// Like jobs, and unlike records, the rows are mutable. cooldown_s is NULL when the runner could
// not tell (its cooldowns ran on another machine): it is then part of run_s.
constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE run_times (
  run TEXT NOT NULL,
  target TEXT NOT NULL,
  task_name TEXT NOT NULL,
  workload TEXT NOT NULL,
  source TEXT NOT NULL,
  started REAL NOT NULL,
  updated REAL NOT NULL,
  trials INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  build_s REAL NOT NULL,
  run_s REAL NOT NULL,
  cooldown_s REAL,
  store_s REAL NOT NULL,
  wall_s REAL NOT NULL,
  PRIMARY KEY (run, target, task_name, workload)
);
CREATE INDEX run_times_by_source ON run_times (source);
)sql";

// Version 7. Jobs are owned (store/job_store.h): the daemon running a job, until when its lease
// holds, and what was asked of it (pause, cancel) by a client of another daemon. ADD COLUMN
// rewrites no row: every job is kept, a running one with no owner (the daemon starting requeues
// it, as before).
constexpr const char* kSchemaV7 = R"sql(
ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN lease_expires REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN request TEXT NOT NULL DEFAULT '';
)sql";

std::string prefix(const sqlite::Database& db) { return "record store '" + db.path() + "': "; }

// Reads (version, application_id, number of user tables).
struct Identity {
  int64_t version = 0;
  int64_t application_id = 0;
  int64_t tables = 0;
};

Result<Identity> read_identity(sqlite::Database& db) {
  Identity id;
  KILN_ASSIGN_OR_RETURN(id.version, db.query_int("PRAGMA user_version"));
  KILN_ASSIGN_OR_RETURN(id.application_id, db.query_int("PRAGMA application_id"));
  KILN_ASSIGN_OR_RETURN(
      id.tables, db.query_int("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"));
  return id;
}

// read_identity as one consistent snapshot (outside any other transaction): without it, a
// concurrent first open could see the version from before another process's migration and the
// tables from after it.
Result<Identity> read_identity_snapshot(sqlite::Database& db) {
  KILN_RETURN_IF_ERROR(db.exec("BEGIN"));
  Result<Identity> id = read_identity(db);
  Status end = db.exec(id.ok() ? "COMMIT" : "ROLLBACK");
  if (!id.ok()) return id.status();
  if (!end.ok()) return end;
  return id;
}

// Whether the database is kiln's (or empty, so it can become kiln's); the error explains.
Status check_identity(const sqlite::Database& db, const Identity& id, int latest) {
  bool fresh = id.version == 0 && id.application_id == 0 && id.tables == 0;
  if (fresh) return Status::Ok();
  if (id.application_id != kApplicationId) {
    return InvalidArgument(prefix(db) +
                           "not a kiln record store (a SQLite database of another "
                           "application: application_id " +
                           std::to_string(id.application_id) + ", " + std::to_string(id.tables) +
                           " tables)");
  }
  if (id.version > latest) {
    return InvalidArgument(prefix(db) + "written by a newer kiln (schema version " +
                           std::to_string(id.version) + "; this kiln knows versions up to " +
                           std::to_string(latest) + "): upgrade kiln to read it");
  }
  return Status::Ok();
}

int last_version(const std::vector<Migration>& migrations) {
  return migrations.empty() ? 0 : migrations.back().version;
}

// Whether SQLite may create the journal, WAL and shared-memory files beside the store: not on a
// read-only mount (EROFS even for root) or in a directory the user may not write.
bool writable_directory(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  return ::access(dir.c_str(), W_OK) == 0;
}

// A read-only open where no file can be created beside the store (a read-only mount, a DVD, a
// directory of someone else's) and no shared-memory file is there: SQLite's plain read-only open
// of a WAL store fails, since it needs one. No process has the store open (every WAL connection
// keeps that file), so it is read as immutable. (With the file there, a writer may be live, and
// the plain read-only open, which works then, sees its commits.)
Result<std::unique_ptr<sqlite::Database>> open_on_read_only_media(
    const std::string& path, const std::vector<Migration>& migrations) {
  // Immutable ignores a WAL file: committed records in it would be silently missing.
  struct stat wal {};
  if (::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) {
    return IoError("record store '" + path + "': its write-ahead log " + path +
                   "-wal holds changes not yet in the store file, and its directory is not "
                   "writable, so they cannot be read: open the store once where it is writable "
                   "(any kiln command), or copy the store with its -wal file to writable media");
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db,
                        sqlite::Database::open_immutable(path));
  KILN_RETURN_IF_ERROR(check_schema(*db, migrations));
  KILN_RETURN_IF_ERROR(db->exec("PRAGMA query_only = 1"));
  return db;
}

}  // namespace

const std::vector<Migration>& schema_migrations() {
  static const std::vector<Migration> kMigrations = {
      {1, "initial schema: records table, best-cost index, append-only triggers", kSchemaV1},
      {2, "records carry their measure options and whether the runner was lost", kSchemaV2},
      {3, "leases: configs claimed by a tuner before it builds them", kSchemaV3},
      {4, "records carry the version of the measurement semantics they ran under", kSchemaV4},
      {5, "jobs of kiln serve; records indexed by source", kSchemaV5},
      {6, "run_times: where each tuning run's time went, per task", kSchemaV6},
      {7, "jobs: owner, lease and request (several daemons on one store)", kSchemaV7},
  };
  return kMigrations;
}

int latest_schema_version() { return last_version(schema_migrations()); }

Status migrate(sqlite::Database& db, const std::vector<Migration>& migrations) {
  const int latest = last_version(migrations);
  // Fast path without the write lock: most opens find the store up to date.
  KILN_ASSIGN_OR_RETURN(Identity before, read_identity_snapshot(db));
  KILN_RETURN_IF_ERROR(check_identity(db, before, latest));
  if (before.version == latest && before.application_id == kApplicationId) return Status::Ok();

  // IMMEDIATE takes the write lock now, so two processes creating the same store serialize here
  // and the second re-reads the version the first committed.
  KILN_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(Identity id, read_identity(db));
    KILN_RETURN_IF_ERROR(check_identity(db, id, latest));
    for (const Migration& m : migrations) {
      if (m.version <= id.version) continue;
      Status s = db.exec(m.sql);
      if (!s.ok()) {
        return Status::Error(s.code(), prefix(db) + "migration to schema version " +
                                           std::to_string(m.version) + " (" + m.description +
                                           ") failed: " + s.message());
      }
    }
    // PRAGMA arguments cannot be bound parameters; both values are integers we control.
    KILN_RETURN_IF_ERROR(db.exec("PRAGMA application_id = " + std::to_string(kApplicationId)));
    return db.exec("PRAGMA user_version = " + std::to_string(latest));
  };
  Status s = body();
  if (!s.ok()) {
    (void)db.exec("ROLLBACK");
    return s;
  }
  return db.exec("COMMIT");
}

Status check_schema(sqlite::Database& db, const std::vector<Migration>& migrations) {
  const int latest = last_version(migrations);
  KILN_ASSIGN_OR_RETURN(Identity id, read_identity_snapshot(db));
  KILN_RETURN_IF_ERROR(check_identity(db, id, latest));
  if (id.version == 0) {
    return InvalidArgument(prefix(db) +
                           "empty file, not yet a kiln record store (a read-only "
                           "open cannot create one)");
  }
  if (id.version < latest) {
    return InvalidArgument(prefix(db) + "schema version " + std::to_string(id.version) +
                           " is older than this kiln's " + std::to_string(latest) +
                           " and the file or its directory is not writable, so it cannot be "
                           "migrated in place: copy it to writable storage and read the copy");
  }
  return Status::Ok();
}

Result<std::unique_ptr<sqlite::Database>> open_store_database(const std::string& path,
                                                              bool read_only, int busy_timeout_ms) {
  const std::vector<Migration>& migrations = schema_migrations();
  if (read_only && !writable_directory(path) && ::access((path + "-shm").c_str(), F_OK) != 0) {
    return open_on_read_only_media(path, migrations);
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db,
                        sqlite::Database::open(path, read_only, busy_timeout_ms));
  if (!read_only) {
    // Migrate first: it refuses another application's database before we change its journal.
    KILN_RETURN_IF_ERROR(migrate(*db, migrations));
    KILN_RETURN_IF_ERROR(db->enable_wal(busy_timeout_ms));
    KILN_RETURN_IF_ERROR(db->exec("PRAGMA synchronous = FULL"));
    return db;
  }
  KILN_ASSIGN_OR_RETURN(Identity id, read_identity_snapshot(*db));
  bool older_kiln_store = id.application_id == kApplicationId && id.version > 0 &&
                          id.version < last_version(migrations);
  if (older_kiln_store && ::access(path.c_str(), W_OK) == 0 && writable_directory(path)) {
    db.reset();
    KILN_RETURN_IF_ERROR(open_store_database(path, /*read_only=*/false, busy_timeout_ms).status());
    KILN_ASSIGN_OR_RETURN(db, sqlite::Database::open(path, read_only, busy_timeout_ms));
  }
  KILN_RETURN_IF_ERROR(check_schema(*db, migrations));
  KILN_RETURN_IF_ERROR(db->exec("PRAGMA query_only = 1"));
  return db;
}

}  // namespace kiln::store
