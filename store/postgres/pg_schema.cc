#include "store/postgres/pg_schema.h"

namespace kiln::store::postgres {

namespace {

// Version 1: the layout of the SQLite store at its version 6, in PostgreSQL's types. Records
// are append-only: a trigger refuses UPDATE and DELETE. mean_cost is stored (NULL for failures)
// so that "best" is an index range scan. Leases, jobs and run times are mutable.
// kiln_commits holds the tokens of transactions that must not be applied twice (see
// pg_connection.h).
constexpr const char* kPgSchemaV1 = R"sql(
CREATE TABLE records (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  target TEXT NOT NULL,
  task_name TEXT NOT NULL,
  workload TEXT NOT NULL,
  config_index BIGINT NOT NULL,
  entities TEXT NOT NULL,
  error_no INTEGER NOT NULL,
  costs TEXT NOT NULL,
  mean_cost DOUBLE PRECISION,
  all_cost DOUBLE PRECISION NOT NULL,
  timestamp DOUBLE PRECISION NOT NULL,
  error_msg TEXT NOT NULL,
  flop DOUBLE PRECISION NOT NULL,
  source TEXT NOT NULL,
  measure_options TEXT NOT NULL DEFAULT '',
  runner_lost INTEGER NOT NULL DEFAULT 0,
  measure_version INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX records_by_workload_cost ON records (target, task_name, workload, mean_cost, id);
CREATE INDEX records_by_source ON records (source);
CREATE FUNCTION kiln_records_append_only() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'kiln records are append-only'; END $$;
CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON records
  FOR EACH STATEMENT EXECUTE FUNCTION kiln_records_append_only();
CREATE TABLE leases (
  target TEXT NOT NULL,
  task_name TEXT NOT NULL,
  workload TEXT NOT NULL,
  config_index BIGINT NOT NULL,
  owner TEXT NOT NULL,
  expires DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (target, task_name, workload, config_index)
);
CREATE INDEX leases_by_owner ON leases (owner);
CREATE TABLE jobs (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  base_dir TEXT NOT NULL,
  priority BIGINT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
  submitted DOUBLE PRECISION NOT NULL,
  updated DOUBLE PRECISION NOT NULL
);
CREATE TABLE run_times (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  run TEXT NOT NULL,
  target TEXT NOT NULL,
  task_name TEXT NOT NULL,
  workload TEXT NOT NULL,
  source TEXT NOT NULL,
  started DOUBLE PRECISION NOT NULL,
  updated DOUBLE PRECISION NOT NULL,
  trials BIGINT NOT NULL,
  errors BIGINT NOT NULL,
  build_s DOUBLE PRECISION NOT NULL,
  run_s DOUBLE PRECISION NOT NULL,
  cooldown_s DOUBLE PRECISION,
  store_s DOUBLE PRECISION NOT NULL,
  wall_s DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run, target, task_name, workload)
);
CREATE INDEX run_times_by_source ON run_times (source);
CREATE TABLE kiln_commits (
  token TEXT PRIMARY KEY,
  at DOUBLE PRECISION NOT NULL
);
)sql";

// Version 2 (SQLite store version 7): jobs are owned by the daemon running them through a
// lease it renews, and carry what a client of another daemon asked of them (pause, cancel).
// ADD COLUMN with a constant default rewrites no row.
constexpr const char* kPgSchemaV2 = R"sql(
ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN lease_expires DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN request TEXT NOT NULL DEFAULT '';
)sql";

// The advisory lock key of schema changes ("kiln" in ASCII).
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(1802071150)";

std::string prefix(const Connection& c) { return "record store '" + c.display() + "': "; }

struct Identity {
  int64_t version = 0;
  bool kiln = false;
  int64_t tables = 0;  // user tables in the current schema
};

Result<Identity> read_identity(Tx& tx) {
  Identity id;
  KILN_ASSIGN_OR_RETURN(
      Rows tables,
      tx.exec("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"));
  id.tables = tables.integer(0, 0);
  KILN_ASSIGN_OR_RETURN(Rows meta, tx.exec("SELECT to_regclass('kiln_meta') IS NOT NULL"));
  if (meta.text(0, 0) != "t") return id;
  KILN_ASSIGN_OR_RETURN(Rows rows, tx.exec("SELECT key, value FROM kiln_meta"));
  for (int i = 0; i < rows.size(); ++i) {
    if (rows.text(i, 0) == "application") id.kiln = rows.text(i, 1) == "kiln";
    if (rows.text(i, 0) == "schema_version") id.version = std::stoll(rows.text(i, 1));
  }
  return id;
}

Status check_identity(const Connection& c, const Identity& id, int latest) {
  if (id.tables == 0) return Status::Ok();
  if (!id.kiln) {
    return InvalidArgument(prefix(c) +
                           "not a kiln record store (a PostgreSQL database of another "
                           "application: " +
                           std::to_string(id.tables) + " tables and no kiln_meta of kiln)");
  }
  if (id.version > latest) {
    return InvalidArgument(prefix(c) + "written by a newer kiln (schema version " +
                           std::to_string(id.version) + "; this kiln knows versions up to " +
                           std::to_string(latest) + "): upgrade kiln to read it");
  }
  return Status::Ok();
}

}  // namespace

const std::vector<PgMigration>& pg_schema_migrations() {
  static const std::vector<PgMigration> kMigrations = {
      {1, "initial schema: records, leases, jobs, run_times (SQLite store version 6)", kPgSchemaV1},
      {2, "jobs: owner, lease and request (several daemons on one store)", kPgSchemaV2},
  };
  return kMigrations;
}

int pg_latest_schema_version() { return pg_schema_migrations().back().version; }

Result<int64_t> read_schema_version(Connection& c) {
  int64_t version = 0;
  KILN_RETURN_IF_ERROR(c.transaction([&](Tx& tx) -> Status {
    KILN_ASSIGN_OR_RETURN(Identity id, read_identity(tx));
    version = id.version;
    return Status::Ok();
  }));
  return version;
}

Status prepare_schema(Connection& c, bool read_only) {
  const int latest = pg_latest_schema_version();
  if (read_only) {
    return c.transaction([&](Tx& tx) -> Status {
      KILN_ASSIGN_OR_RETURN(Identity id, read_identity(tx));
      KILN_RETURN_IF_ERROR(check_identity(c, id, latest));
      if (id.tables == 0) {
        return InvalidArgument(prefix(c) +
                               "empty database, not yet a kiln record store (a read-only open "
                               "cannot create one)");
      }
      if (id.version < latest) {
        return InvalidArgument(prefix(c) + "schema version " + std::to_string(id.version) +
                               " is older than this kiln's " + std::to_string(latest) +
                               ": open it once read-write (any kiln command that writes) to "
                               "migrate it");
      }
      return Status::Ok();
    });
  }
  return c.transaction([&](Tx& tx) -> Status {
    KILN_RETURN_IF_ERROR(tx.exec(kSchemaLock).status());
    KILN_ASSIGN_OR_RETURN(Identity id, read_identity(tx));
    KILN_RETURN_IF_ERROR(check_identity(c, id, latest));
    if (id.kiln && id.version == latest) return Status::Ok();
    if (id.tables == 0) {
      KILN_RETURN_IF_ERROR(
          tx.exec("CREATE TABLE kiln_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)").status());
      KILN_RETURN_IF_ERROR(
          tx.exec("INSERT INTO kiln_meta VALUES ('application', 'kiln'), ('schema_version', '0')")
              .status());
    }
    for (const PgMigration& m : pg_schema_migrations()) {
      if (m.version <= id.version) continue;
      Result<Rows> r = tx.exec(m.sql);
      if (!r.ok()) {
        return Status::Error(r.status().code(), prefix(c) + "migration to schema version " +
                                                    std::to_string(m.version) + " (" +
                                                    m.description +
                                                    ") failed: " + r.status().message());
      }
    }
    return tx
        .exec("UPDATE kiln_meta SET value = $1 WHERE key = 'schema_version'",
              {std::to_string(latest)})
        .status();
  });
}

}  // namespace kiln::store::postgres
