// One libpq connection to a PostgreSQL record store, and the one way the backend talks to it:
// transactions of parameterized statements (text format), retried as a whole when the server
// went away (a restart, a dropped network) or PostgreSQL aborted them for a serialization
// failure or a deadlock. A lost connection is reopened with bounded retries (reconnect_window
// seconds in all, kDefaultReconnectWindowS unless KILN_STORE_RECONNECT_S says otherwise); a
// server that stays down gives an I/O error naming it, never a hang.
//
// A transaction whose COMMIT was sent but not acknowledged may or may not have committed; the
// caller that must not apply it twice gives it a token (transaction(token, ...)): the token is
// written in the same transaction (table kiln_commits), and a retry first looks it up. A retry
// comes within the reconnection window, so tokens older than kCommitTokenLifetimeS are deleted
// (prune_commit_tokens: when a store is opened for writing, and every kPruneEveryCommits
// token commits), and the table does not grow with the store.
//
// Not thread-safe: the stores serialize calls with their own mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

struct pg_conn;
struct pg_result;

namespace kiln::store::postgres {

inline constexpr double kDefaultReconnectWindowS = 30;
inline constexpr double kCommitTokenLifetimeS = 24 * 3600;
inline constexpr int kPruneEveryCommits = 4096;

// A statement's parameter: text, a number, or SQL NULL.
struct Param {
  std::optional<std::string> text;
  Param(std::nullopt_t) {}
  Param(const std::string& s);
  Param(const char* s) : Param(std::string(s)) {}
  Param(int64_t v) : text(std::to_string(v)) {}
  Param(int v) : text(std::to_string(v)) {}
  Param(bool v) : text(v ? "1" : "0") {}
  Param(double v);
  Param(const std::optional<double>& v);
};

// A statement's result rows, as text.
class Rows {
 public:
  explicit Rows(pg_result* r);
  Rows(Rows&& other) noexcept;
  Rows& operator=(Rows&&) = delete;
  Rows(const Rows&) = delete;
  ~Rows();
  int size() const;
  bool is_null(int row, int col) const;
  std::string text(int row, int col) const;
  int64_t integer(int row, int col) const;
  double real(int row, int col) const;
  int64_t affected() const;  // rows changed by an INSERT, UPDATE or DELETE

 private:
  pg_result* r_;
};

class Connection;

// What a transaction's body runs its statements through.
class Tx {
 public:
  Result<Rows> exec(const std::string& sql, const std::vector<Param>& params = {});

 private:
  friend class Connection;
  explicit Tx(Connection& c) : c_(c) {}
  Connection& c_;
};

class Connection {
 public:
  // Connects to `uri` (a libpq connection URI or string). `display` names the store in errors
  // (the URI without its password). read_only: every transaction is READ ONLY.
  static Result<std::unique_ptr<Connection>> open(const std::string& uri,
                                                  const std::string& display, bool read_only);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const std::string& display() const { return display_; }
  bool read_only() const { return read_only_; }

  // Runs `body` in one transaction, retried as described above; body may run several times and
  // must only touch state it resets. A body error rolls back and is returned as it is.
  Status transaction(const std::function<Status(Tx&)>& body);
  Status transaction(const std::string& token, const std::function<Status(Tx&)>& body);
  // Deletes the commit tokens older than kCommitTokenLifetimeS (REQUIRES the schema).
  Status prune_commit_tokens();

 private:
  friend class Tx;
  Connection(std::string uri, std::string display, bool read_only);
  Status connect_with_retries();
  Status connect_once();
  // Runs one statement; a failure says whether retrying the transaction may help.
  Result<Rows> exec(const std::string& sql, const std::vector<Param>& params);
  Status attempt(const std::string& token, const std::function<Status(Tx&)>& body, bool* retryable,
                 bool* commit_unknown);

  std::string uri_;
  std::string display_;
  bool read_only_;
  double reconnect_window_s_;
  pg_conn* conn_ = nullptr;
  bool last_error_retryable_ = false;
  int token_commits_ = 0;  // since the last prune
};

// A commit token (Connection::transaction) no other transaction of any process has: host, pid,
// random bits and a counter.
std::string unique_commit_token();

// `uri` with its password (user:PASSWORD@ or password=...) replaced by "***".
std::string redact_password(const std::string& uri);

}  // namespace kiln::store::postgres
