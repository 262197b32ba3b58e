#include "store/sqlite/sqlite_db.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

namespace kiln::store::sqlite {

// ---------------------------------------------------------------------------------------------
// Statement

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), bind_rc_(other.bind_rc_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_rc_ = other.bind_rc_;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

namespace {
void remember(int* slot, int rc) {
  if (rc != SQLITE_OK && *slot == 0) *slot = rc;
}
}  // namespace

void Statement::bind(int index, int64_t value) {
  remember(&bind_rc_, sqlite3_bind_int64(stmt_, index, value));
}
void Statement::bind(int index, double value) {
  remember(&bind_rc_, sqlite3_bind_double(stmt_, index, value));
}
void Statement::bind(int index, std::string_view text) {
  remember(&bind_rc_, sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                          SQLITE_UTF8));
}
void Statement::bind_null(int index) { remember(&bind_rc_, sqlite3_bind_null(stmt_, index)); }

Result<bool> Statement::step() {
  if (bind_rc_ != 0) return db_->error(bind_rc_, "binding a parameter");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->error(rc, sqlite3_sql(stmt_));
}

Status Statement::run() {
  while (true) {
    KILN_ASSIGN_OR_RETURN(bool row, step());
    if (!row) return Status::Ok();
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_rc_ = 0;
}

int64_t Statement::column_int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::column_double(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::column_text(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return text ? std::string(reinterpret_cast<const char*>(text), n) : std::string();
}
bool Statement::column_is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

// ---------------------------------------------------------------------------------------------
// Database

Result<std::unique_ptr<Database>> Database::open(const std::string& path, bool read_only,
                                                 int busy_timeout_ms) {
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  // The SqliteStore mutex serializes use of a connection; SQLite's own mutex is not needed.
  flags |= SQLITE_OPEN_NOMUTEX;
  sqlite3* handle = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    sqlite3_close(handle);
    return IoError("record store '" + path + "': cannot open" + (read_only ? " read-only" : "") +
                   ": " + message);
  }
  std::unique_ptr<Database> db(new Database(path, read_only, handle));
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, busy_timeout_ms);
  return db;
}

Result<std::unique_ptr<Database>> Database::open_immutable(const std::string& path) {
  // A URI names the file: escape what a URI reads specially, so that any path works. An
  // absolute path gets an empty authority ("file:///..."), else "//x" would read as a host.
  std::string uri = path.rfind('/', 0) == 0 ? "file://" : "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    } else {
      uri += static_cast<char>(c);
    }
  }
  uri += "?immutable=1";
  sqlite3* handle = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &handle,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    sqlite3_close(handle);
    return IoError("record store '" + path + "': cannot open read-only: " + message);
  }
  sqlite3_extended_result_codes(handle, 1);
  return std::unique_ptr<Database>(new Database(path, /*read_only=*/true, handle));
}

Database::~Database() { sqlite3_close_v2(db_); }

Status Database::exec(std::string_view sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string what = message ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return error(rc, std::string(sql) + " (" + what + ")");
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return error(rc, sql);
  }
  return Statement(this, stmt);
}

int64_t Database::changes() const { return sqlite3_changes64(db_); }

Result<int64_t> Database::query_int(std::string_view sql) {
  KILN_ASSIGN_OR_RETURN(Statement stmt, prepare(sql));
  KILN_ASSIGN_OR_RETURN(bool row, stmt.step());
  if (!row) return InternalError("record store '" + path_ + "': no result for " + std::string(sql));
  return stmt.column_int(0);
}

Status Database::enable_wal(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    std::string mode;
    char* message = nullptr;
    int rc = sqlite3_exec(
        db_, "PRAGMA journal_mode = WAL",
        [](void* out, int, char** values, char**) {
          if (values[0]) *static_cast<std::string*>(out) = values[0];
          return 0;
        },
        &mode, &message);
    sqlite3_free(message);
    if (rc == SQLITE_OK) {
      if (mode == "wal") return Status::Ok();
      return IoError("record store '" + path_ + "': cannot use the WAL journal (journal mode is '" +
                     mode + "'; is the file on a network file system?)");
    }
    int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() >= deadline) {
      return error(rc, "PRAGMA journal_mode = WAL");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

Status Database::error(int rc, std::string_view what) const {
  std::string message = "record store '" + path_ + "': ";
  int primary = rc & 0xff;
  if (primary == SQLITE_NOTADB) {
    return InvalidArgument(message + "not a SQLite database (" + sqlite3_errstr(rc) + ")");
  }
  if (primary == SQLITE_CORRUPT) {
    return InvalidArgument(message + "the database file is corrupt (" + sqlite3_errmsg(db_) +
                           ") while running: " + std::string(what));
  }
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    return IoError(message +
                   "database is locked by another connection (waited for the busy "
                   "timeout) while running: " +
                   std::string(what));
  }
  return IoError(message + std::string(what) + ": " + sqlite3_errmsg(db_));
}

}  // namespace kiln::store::sqlite
