// Opening a store by where it is: the one place that maps a location to a backend.
//
// A location is a URL SCHEME://REST or a plain path. Schemes: sqlite://PATH (a SQLite file at
// PATH, store/sqlite/); postgresql:// (or postgres://), a libpq connection URI of a PostgreSQL
// database (store/postgres/: postgresql://USER@HOST:PORT/DB?sslmode=verify-full, the password
// from PGPASSFILE or ~/.pgpass). A plain path is a SQLite file too (what every kiln command has
// always taken). Any other scheme is refused with an error naming it (kInvalidArgument). The other
// errors are the backend's (they name the store).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "store/job_store.h"
#include "store/store.h"

namespace kiln::store {

// Opens the records, leases and run times at `location`, creating the store when absent unless
// read_only (see the backend for what read-only allows: SqliteStore::open).
Result<std::unique_ptr<Store>> open_store(const std::string& location, bool read_only = false);
// Whether `location` names a PostgreSQL store (postgresql:// or postgres://): a store on a
// server, shared by processes on several machines, with no file to lock.
bool is_postgres_location(const std::string& location);
// The file of a SQLite location (a plain path, or PATH of sqlite://PATH); nullopt for a
// PostgreSQL store or an unknown scheme.
std::optional<std::string> sqlite_file(const std::string& location);
// `location` as it may be printed: a PostgreSQL URI's password replaced by "***".
std::string printable_location(const std::string& location);

// Opens the daemon's jobs of the store at `location` (a connection of its own).
Result<std::unique_ptr<JobStore>> open_job_store(const std::string& location,
                                                 bool read_only = false);

}  // namespace kiln::store
