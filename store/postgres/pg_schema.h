// The PostgreSQL store's schema: versioned migrations, as the SQLite store's
// (store/sqlite/schema.h), applied in order on a read-write open. The version and the
// application live in the table kiln_meta (key 'application' = 'kiln', 'schema_version' = N), so
// that another application's database is refused and a newer kiln's store is not touched.
// Concurrent first opens serialize on a transaction-scoped advisory lock.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "store/postgres/pg_connection.h"

namespace kiln::store::postgres {

struct PgMigration {
  int version;
  const char* description;
  const char* sql;
};

const std::vector<PgMigration>& pg_schema_migrations();
int pg_latest_schema_version();

// Creates or migrates the schema (read-write), or checks it is current (read-only: an empty
// database or an older schema is an error naming the store). Errors name the store.
Status prepare_schema(Connection& c, bool read_only);

// The schema version of the store (0 for an empty database).
Result<int64_t> read_schema_version(Connection& c);

}  // namespace kiln::store::postgres
