#include "store/open_store.h"

#include <cctype>
#include <optional>
#include <string_view>

#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_job_store.h"
#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_job_store.h"
#include "store/sqlite/sqlite_store.h"

namespace kiln::store {

namespace {

enum class Backend { kSqlite, kPostgres };

struct Location {
  Backend backend;
  std::string path;  // what the backend opens (for PostgreSQL, the whole URI: libpq parses it)
};

// The scheme of a URL "SCHEME://..." (RFC 3986: a letter, then letters, digits, + - .), or
// nullopt for a plain path (a file name may hold ':' but no scheme before "://").
std::optional<std::string_view> url_scheme(std::string_view location) {
  size_t end = location.find("://");
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  std::string_view scheme = location.substr(0, end);
  if (!std::isalpha(static_cast<unsigned char>(scheme[0]))) return std::nullopt;
  for (char c : scheme) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return std::nullopt;
    }
  }
  return scheme;
}

Result<Location> parse_location(const std::string& location) {
  std::optional<std::string_view> scheme = url_scheme(location);
  if (!scheme) return Location{Backend::kSqlite, location};
  if (*scheme == "sqlite") {
    std::string path = location.substr(scheme->size() + 3);
    if (path.empty()) {
      return InvalidArgument("record store '" + location + "': sqlite:// names no file");
    }
    return Location{Backend::kSqlite, std::move(path)};
  }
  if (*scheme == "postgresql" || *scheme == "postgres") {
    return Location{Backend::kPostgres, location};
  }
  return InvalidArgument("record store '" + location + "': unknown scheme '" +
                         std::string(*scheme) +
                         "' (known: sqlite://PATH, postgresql://USER@HOST:PORT/DB, or a plain "
                         "path of a SQLite file)");
}

// Opens `location` with the backend's class for `Interface` (Sqlite, Postgres: its
// implementations).
template <class Interface, class Sqlite, class Postgres>
Result<std::unique_ptr<Interface>> open_at(const std::string& location, bool read_only) {
  KILN_ASSIGN_OR_RETURN(Location where, parse_location(location));
  switch (where.backend) {
    case Backend::kSqlite: {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<Sqlite> s, Sqlite::open(where.path, read_only));
      return std::unique_ptr<Interface>(std::move(s));
    }
    case Backend::kPostgres: {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<Postgres> s, Postgres::open(where.path, read_only));
      return std::unique_ptr<Interface>(std::move(s));
    }
  }
  return InternalError("record store '" + location + "': no backend");
}

}  // namespace

bool is_postgres_location(const std::string& location) {
  std::optional<std::string_view> scheme = url_scheme(location);
  return scheme && (*scheme == "postgresql" || *scheme == "postgres");
}

std::optional<std::string> sqlite_file(const std::string& location) {
  Result<Location> where = parse_location(location);
  if (!where.ok() || where->backend != Backend::kSqlite) return std::nullopt;
  return where->path;
}

std::string printable_location(const std::string& location) {
  return is_postgres_location(location) ? postgres::redact_password(location) : location;
}

Result<std::unique_ptr<Store>> open_store(const std::string& location, bool read_only) {
  return open_at<Store, sqlite::SqliteStore, postgres::PgStore>(location, read_only);
}

Result<std::unique_ptr<JobStore>> open_job_store(const std::string& location, bool read_only) {
  return open_at<JobStore, sqlite::SqliteJobStore, postgres::PgJobStore>(location, read_only);
}

}  // namespace kiln::store
