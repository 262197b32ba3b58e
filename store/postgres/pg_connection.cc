#include "store/postgres/pg_connection.h"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

namespace kiln::store::postgres {

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double reconnect_window_from_env() {
  const char* env = std::getenv("KILN_STORE_RECONNECT_S");
  if (!env || !*env) return kDefaultReconnectWindowS;
  char* end = nullptr;
  double v = std::strtod(env, &end);
  return end && *end == '\0' && v >= 0 ? v : kDefaultReconnectWindowS;
}

// SQLSTATEs after which the same transaction may succeed when run again: the connection's class
// (08), the server shutting down or starting (57P01..57P03), a serialization failure, a deadlock.
bool retryable_state(const char* state) {
  if (!state) return false;
  return std::strncmp(state, "08", 2) == 0 || std::strcmp(state, "57P01") == 0 ||
         std::strcmp(state, "57P02") == 0 || std::strcmp(state, "57P03") == 0 ||
         std::strcmp(state, "40001") == 0 || std::strcmp(state, "40P01") == 0;
}

// libpq's message on one line: its hint lines joined with spaces, no trailing newline.
std::string trimmed(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

Param::Param(const std::string& s) {
  // A text parameter ends at its first NUL byte: one inside is stored as U+FFFD, not truncated.
  std::string t;
  t.reserve(s.size());
  for (char c : s) {
    if (c == '\0') {
      t += "\xef\xbf\xbd";
    } else {
      t += c;
    }
  }
  text = std::move(t);
}

Param::Param(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  text = buf;
}

Param::Param(const std::optional<double>& v) {
  if (v) *this = Param(*v);
}

Rows::Rows(pg_result* r) : r_(r) {}
Rows::Rows(Rows&& other) noexcept : r_(other.r_) { other.r_ = nullptr; }
Rows::~Rows() {
  if (r_) PQclear(r_);
}
int Rows::size() const { return PQntuples(r_); }
bool Rows::is_null(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
std::string Rows::text(int row, int col) const {
  return std::string(PQgetvalue(r_, row, col), PQgetlength(r_, row, col));
}
int64_t Rows::integer(int row, int col) const {
  return std::strtoll(PQgetvalue(r_, row, col), nullptr, 10);
}
double Rows::real(int row, int col) const { return std::strtod(PQgetvalue(r_, row, col), nullptr); }
int64_t Rows::affected() const {
  const char* n = PQcmdTuples(r_);
  return n && *n ? std::strtoll(n, nullptr, 10) : 0;
}

Result<Rows> Tx::exec(const std::string& sql, const std::vector<Param>& params) {
  return c_.exec(sql, params);
}

Connection::Connection(std::string uri, std::string display, bool read_only)
    : uri_(std::move(uri)),
      display_(std::move(display)),
      read_only_(read_only),
      reconnect_window_s_(reconnect_window_from_env()) {}

Connection::~Connection() {
  if (conn_) PQfinish(conn_);
}

Result<std::unique_ptr<Connection>> Connection::open(const std::string& uri,
                                                     const std::string& display, bool read_only) {
  std::unique_ptr<Connection> c(new Connection(uri, display, read_only));
  KILN_RETURN_IF_ERROR(c->connect_with_retries());
  return c;
}

Status Connection::connect_once() {
  if (conn_) PQfinish(conn_);
  conn_ = PQconnectdb(uri_.c_str());
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string e = trimmed(PQerrorMessage(conn_));
    PQfinish(conn_);
    conn_ = nullptr;
    return IoError("record store '" + display_ + "': cannot connect: " + e);
  }
  // Notices (e.g. "relation already exists, skipping") are not the user's business.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  const char* session = read_only_
                            ? "SET default_transaction_read_only = on; SET client_encoding = UTF8"
                            : "SET client_encoding = UTF8";
  PGresult* r = PQexec(conn_, session);
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (!ok) {
    std::string e = trimmed(PQerrorMessage(conn_));
    PQfinish(conn_);
    conn_ = nullptr;
    return IoError("record store '" + display_ + "': " + e);
  }
  return Status::Ok();
}

Status Connection::connect_with_retries() {
  const double deadline = seconds_now() + reconnect_window_s_;
  double pause = 0.05;
  while (true) {
    Status s = connect_once();
    if (s.ok()) return s;
    // Authentication, unknown databases and a server certificate that fails verification
    // (sslmode=verify-ca / verify-full) do not heal by waiting.
    const std::string& m = s.message();
    if (m.find("does not exist") != std::string::npos ||
        m.find("authentication failed") != std::string::npos ||
        m.find("password") != std::string::npos || m.find("invalid") != std::string::npos ||
        m.find("certificate") != std::string::npos ||
        m.find("does not match host name") != std::string::npos ||
        m.find("root certificate file") != std::string::npos || seconds_now() + pause > deadline) {
      if (reconnect_window_s_ > 0 && seconds_now() + pause > deadline) {
        return IoError(m + " (retried for " +
                       std::to_string(static_cast<int>(reconnect_window_s_)) + " s)");
      }
      return s;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 2, 1.0);
  }
}

Result<Rows> Connection::exec(const std::string& sql, const std::vector<Param>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& p : params) values.push_back(p.text ? p.text->c_str() : nullptr);
  // Without parameters, the simple protocol, which also runs several statements (migrations).
  PGresult* r = params.empty() ? PQexec(conn_, sql.c_str())
                               : PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()),
                                              nullptr, values.data(), nullptr, nullptr, 0);
  ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
    last_error_retryable_ = false;
    return Rows(r);
  }
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  last_error_retryable_ = PQstatus(conn_) != CONNECTION_OK || retryable_state(state);
  std::string e = trimmed(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
  if (e.empty()) e = trimmed(PQerrorMessage(conn_));
  if (r) PQclear(r);
  return IoError("record store '" + display_ + "': " + e);
}

Status Connection::attempt(const std::string& token, const std::function<Status(Tx&)>& body,
                           bool* retryable, bool* commit_unknown) {
  *retryable = false;
  *commit_unknown = false;
  Tx tx(*this);
  auto failed = [&](const Status& s) {
    *retryable = last_error_retryable_;
    if (PQstatus(conn_) == CONNECTION_OK) {
      PGresult* r = PQexec(conn_, "ROLLBACK");
      PQclear(r);
    }
    return s;
  };
  Result<Rows> begin = exec("BEGIN", {});
  if (!begin.ok()) return failed(begin.status());
  Status s = body(tx);
  if (!s.ok()) {
    // An error of the body's own (not the server's) is not retried.
    if (!last_error_retryable_ || s.code() != StatusCode::kIo) last_error_retryable_ = false;
    return failed(s);
  }
  if (!token.empty()) {
    Result<Rows> mark = exec(
        "INSERT INTO kiln_commits (token, at) VALUES ($1, extract(epoch from now()))", {token});
    if (!mark.ok()) return failed(mark.status());
  }
  Result<Rows> commit = exec("COMMIT", {});
  if (!commit.ok()) {
    *commit_unknown = PQstatus(conn_) != CONNECTION_OK;
    return failed(commit.status());
  }
  return Status::Ok();
}

Status Connection::transaction(const std::function<Status(Tx&)>& body) {
  return transaction(std::string(), body);
}

Status Connection::transaction(const std::string& token, const std::function<Status(Tx&)>& body) {
  const double deadline = seconds_now() + reconnect_window_s_;
  bool maybe_committed = false;
  for (int tries = 1;; ++tries) {
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
      Status c = connect_with_retries();
      if (!c.ok()) return c;
      spdlog::info("record store '{}': reconnected", display_);
    }
    if (maybe_committed && !token.empty()) {
      Result<Rows> seen = exec("SELECT 1 FROM kiln_commits WHERE token = $1", {token});
      if (seen.ok() && seen->size() > 0) return Status::Ok();  // it did commit
      if (!seen.ok()) {
        if (seconds_now() > deadline) return seen.status();
        continue;
      }
    }
    bool retryable = false;
    bool commit_unknown = false;
    Status s = attempt(token, body, &retryable, &commit_unknown);
    if (s.ok()) {
      if (!token.empty() && ++token_commits_ >= kPruneEveryCommits) {
        // Best effort: the commit stands whatever the prune does.
        Status pruned = prune_commit_tokens();
        if (!pruned.ok()) spdlog::warn("{}", pruned.message());
      }
      return s;
    }
    maybe_committed = maybe_committed || commit_unknown;
    if (!retryable || seconds_now() > deadline) return s;
    if (commit_unknown && token.empty()) {
      return IoError(s.message() +
                     " (the connection was lost during COMMIT: whether the "
                     "change was applied is unknown)");
    }
    spdlog::warn("{} (retrying, attempt {})", s.message(), tries + 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20 * tries, 500)));
  }
}

std::string unique_commit_token() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt =
      std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + "/" + std::to_string(::getpid()) + "/" + std::to_string(salt) + "/" +
         std::to_string(counter++);
}

Status Connection::prune_commit_tokens() {
  token_commits_ = 0;
  return transaction([](Tx& tx) {
    return tx
        .exec("DELETE FROM kiln_commits WHERE at < extract(epoch from now()) - $1",
              {kCommitTokenLifetimeS})
        .status();
  });
}

std::string redact_password(const std::string& uri) {
  std::string out = uri;
  // URI form: scheme://user:password@host
  size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    size_t start = scheme + 3;
    size_t at = out.find('@', start);
    size_t slash = out.find('/', start);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=... as a query parameter or keyword/value pair
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    size_t v = p + 9;
    size_t end = out.find_first_of("& ", v);
    out.replace(v, (end == std::string::npos ? out.size() : end) - v, "***");
  }
  return out;
}

}  // namespace kiln::store::postgres
