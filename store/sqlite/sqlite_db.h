// Thin RAII wrappers over the SQLite C API for the SQLite store (internal to store/sqlite/): a
// connection that names its file in every error, and prepared statements. Not thread-safe: the
// owner serializes access (SqliteStore holds a mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kiln::store::sqlite {

class Database;

// A prepared statement. Bind parameters are 1-based, columns 0-based, as in SQLite.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binding never fails loudly: a failure is remembered and returned by the next step().
  void bind(int index, int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view text);
  void bind_null(int index);
  // Binds `values` to parameters first, first + 1, ... in order: integers (and bools, as 0/1),
  // doubles, text, and optionals (nullopt binds NULL). Returns the next free parameter index.
  template <class... T>
  int bind_all(int first, const T&... values) {
    int index = first;
    (bind_value(index++, values), ...);
    return index;
  }

  // Runs one step: true when a row is available, false when done.
  Result<bool> step();
  // Steps to completion, ignoring rows.
  Status run();
  // Makes the statement ready to run again with new bindings.
  void reset();

  int64_t column_int(int col) const;
  double column_double(int col) const;
  std::string column_text(int col) const;
  bool column_is_null(int col) const;
  // Reads columns 0, 1, ... of the current row into `fields`, in order, converting to each
  // field's type as bind_all does (an optional<double> is nullopt for NULL).
  template <class... T>
  void read_row(T&... fields) const {
    int col = 0;
    (read_column(col++, fields), ...);
  }

 private:
  friend class Database;
  Statement(const Database* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  template <class T>
  void bind_value(int index, const T& value) {
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      if (value) {
        bind(index, *value);
      } else {
        bind_null(index);
      }
    } else if constexpr (std::is_integral_v<T>) {
      bind(index, static_cast<int64_t>(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      bind(index, static_cast<double>(value));
    } else {
      bind(index, std::string_view(value));
    }
  }
  template <class T>
  void read_column(int col, T& field) const {
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      field = column_is_null(col) ? std::nullopt : std::optional<double>(column_double(col));
    } else if constexpr (std::is_same_v<T, bool>) {
      field = column_int(col) != 0;
    } else if constexpr (std::is_integral_v<T>) {
      field = static_cast<T>(column_int(col));
    } else if constexpr (std::is_floating_point_v<T>) {
      field = column_double(col);
    } else {
      static_assert(std::is_same_v<T, std::string>, "read_row reads numbers and text");
      field = column_text(col);
    }
  }

  const Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_rc_ = 0;  // first failed sqlite3_bind_* code, 0 when all succeeded
};

class Database {
 public:
  // Opens (read_only: an existing file without creating it; otherwise creating it when absent).
  // Sets a busy timeout so that concurrent writers wait instead of failing.
  static Result<std::unique_ptr<Database>> open(const std::string& path, bool read_only,
                                                int busy_timeout_ms);
  // Opens an existing file read-only as immutable (SQLite's immutable=1): no lock, journal or
  // shared-memory file is used or created, so it works on read-only media, where a WAL store's
  // plain read-only open fails ("unable to open database file"). REQUIRES of the caller: no one
  // writes the file meanwhile, and it has no write-ahead log left to apply.
  static Result<std::unique_ptr<Database>> open_immutable(const std::string& path);
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more SQL statements that return no rows of interest.
  Status exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql);
  // Rows inserted, updated or deleted by the last completed statement (sqlite3_changes64).
  int64_t changes() const;
  // Runs a statement returning one integer (e.g. "PRAGMA user_version").
  Result<int64_t> query_int(std::string_view sql);

  // Switches the file to the WAL journal (a no-op when it already uses it). Changing the journal
  // mode needs every other connection to be idle and SQLite does not wait for that with the busy
  // handler, so this retries for up to `timeout_ms`. Errors: still busy, or a file system
  // without WAL support (the mode stays something else).
  Status enable_wal(int timeout_ms);

  // A failed Status for SQLite result code `rc` naming the file and what was being done:
  // "record store 'PATH': WHAT: MESSAGE". A file that is not a database or is corrupt gives
  // kInvalidArgument, other failures kIo.
  Status error(int rc, std::string_view what) const;

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

 private:
  Database(std::string path, bool read_only, sqlite3* db)
      : path_(std::move(path)), read_only_(read_only), db_(db) {}

  std::string path_;
  bool read_only_;
  sqlite3* db_;
};

}  // namespace kiln::store::sqlite
