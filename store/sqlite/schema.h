// The record store's on-disk schema and its migrations (internal to the SQLite backend,
// store/sqlite/).
//
// A kiln store is marked by PRAGMA application_id = kApplicationId and versioned by PRAGMA
// user_version = the number of the last migration applied. Migrations are an append-only, ordered
// list: migration N turns a version N-1 database into version N. Never edit a released one; add
// the next.
//
// Versions:
//   1  records (append-only: triggers refuse UPDATE and DELETE), best-cost index
//   2  records.measure_options (canonical JSON, '' = unknown) and records.runner_lost
//   3  leases: (target, task_name, workload, config_index) -> owner, expires (unix seconds)
//   4  records.measure_version (ops/measured_layout.h; older records are version 1)
//   5  jobs (kiln serve's queue, store/job_store.h); index of records by source
//   6  run_times: build/run/cooldown/store/wall seconds per (run, task) (store/run_times.h)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/sqlite/sqlite_db.h"

namespace kiln::store {

inline constexpr int64_t kApplicationId = 0x6B696C6E;  // "kiln" in ASCII

struct Migration {
  int version;              // 1, 2, ... without gaps
  const char* description;  // for error messages
  const char* sql;          // one or more statements
};

// kiln's migrations, in order. Version 1 is the initial schema.
const std::vector<Migration>& schema_migrations();
// The version this kiln writes: schema_migrations().back().version.
int latest_schema_version();

// Brings the database to the last version of `migrations`, applying every missing migration and
// the version bump in ONE write transaction (so a crash leaves the old version intact). Several
// processes may open the same new file at once: the first migrates, the others see it done.
// Errors: the file is not a SQLite database, it is another application's database, or it was
// written by a newer kiln (its version is above the last known one).
Status migrate(sqlite::Database& db, const std::vector<Migration>& migrations);

// For read-only connections: succeeds only when the database is a kiln store at exactly the last
// version of `migrations` (a read-only connection cannot migrate).
Status check_schema(sqlite::Database& db, const std::vector<Migration>& migrations);

// Opens the database of a kiln store (SqliteStore, SqliteJobStore) at kiln's latest schema version.
// Read-write: created when absent, migrated, in WAL mode with synchronous = FULL (an
// acknowledged write survives a crash of the machine). Read-only: the connection is query_only;
// a store an older kiln wrote is first migrated through a short read-write connection when the
// file is writable (the migrations only add tables and columns, in one transaction), so that
// read-only commands (best, export, report) work on it; otherwise it is refused, saying why.
Result<std::unique_ptr<sqlite::Database>> open_store_database(const std::string& path,
                                                              bool read_only, int busy_timeout_ms);

}  // namespace kiln::store
