// A real PostgreSQL server for tests: initdb in a fresh temporary directory, the server on
// 127.0.0.1 and a free port (no Unix socket, trust authentication for the role "kiln"), shared by
// every test of one test process (PgServer::shared()), each test taking a new empty database
// (new_database()). initdb runs once per user: its result is kept as a template in
// $TMPDIR/kiln_pg_initdb_template_UID and copied for each server. PostgreSQL refuses to run as
// root, so as root the server runs as the unprivileged user "nobody" (runuser).
//
// The server never outlives the test binary: a watchdog process, started before the server,
// holds the read end of a pipe whose write end only the test process has (close-on-exec, so no
// kiln child inherits it); when the test process ends, however it ends (a crash, SIGKILL), the
// pipe reaches end of file and the watchdog stops the server (immediate mode) and removes the
// directory.
//
// Absent binaries (no postgresql package): shared() returns nullptr and skip_reason() says why;
// tests then GTEST_SKIP with it. `make test` installs them (scripts/install-deps.sh).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace kiln::testing {

class PgServer {
 public:
  // Where Debian's postgresql 15 installs its server binaries.
  static std::string bin_dir() {
    const char* env = std::getenv("KILN_PG_BINDIR");
    return env && *env ? env : "/usr/lib/postgresql/15/bin";
  }
  static bool available() { return ::access((bin_dir() + "/pg_ctl").c_str(), X_OK) == 0; }
  static std::string skip_reason() {
    return "PostgreSQL server binaries not found in " + bin_dir() +
           " (install the postgresql package: scripts/install-deps.sh)";
  }

  // The binary's one server, started on first call; nullptr when the binaries are absent. A
  // server that fails to start throws (the test fails with the server's log).
  static PgServer* shared() {
    if (!available()) return nullptr;
    static std::unique_ptr<PgServer> server(new PgServer());
    return server.get();
  }

  // The watchdog stops the server and removes the directory, after the test process is gone:
  // the process does not wait for the server's shutdown.
  ~PgServer() {
    if (watchdog_write_ >= 0) ::close(watchdog_write_);
  }
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // The URI of database `db` on this server as the role kiln.
  std::string uri(const std::string& db) const {
    return "postgresql://kiln@127.0.0.1:" + std::to_string(port_) + "/" + db;
  }
  // A new, empty database; returns its URI.
  std::string new_database() {
    static std::atomic<int> next{0};
    const std::string name = "kiln_t" + std::to_string(::getpid()) + "_" + std::to_string(next++);
    sql("postgres", "CREATE DATABASE " + name);
    return uri(name);
  }
  // Runs `statement` on database `db` (throws on failure).
  void sql(const std::string& db, const std::string& statement) const {
    (void)run_query(db, statement, /*rows=*/false);
  }

  // The first column of the first row of `query` on database `db` ("" when none; throws on
  // failure).
  std::string query_one(const std::string& db, const std::string& query) const {
    return run_query(db, query, /*rows=*/true);
  }

  // A login role that must give `password` (scram-sha-256 over 127.0.0.1; every other role keeps
  // trust), owning database `db`.
  void add_password_role(const std::string& role, const std::string& password,
                         const std::string& db) {
    sql("postgres", "CREATE ROLE " + role + " LOGIN PASSWORD '" + password + "'");
    sql("postgres", "ALTER DATABASE " + db + " OWNER TO " + role);
    const std::string hba = dir_ + "/data/pg_hba.conf";
    run("{ echo 'host all " + role + " 127.0.0.1/32 scram-sha-256'; cat '" + hba + "'; } > '" +
        hba + ".new' && cat '" + hba + ".new' > '" + hba + "' && rm '" + hba + ".new'");
    (void)query_one("postgres", "SELECT pg_reload_conf()");
  }

  // Turns TLS on (ssl = on with this certificate chain and key, PEM files copied into the data
  // directory for the server's user) or off again; plaintext connections stay accepted.
  void enable_tls(const std::string& cert_pem, const std::string& key_pem) {
    const std::string data = dir_ + "/data";
    run("cp '" + cert_pem + "' '" + data + "/server.crt' && cp '" + key_pem + "' '" + data +
        "/server.key' && chmod 600 '" + data + "/server.key'" +
        (::geteuid() == 0 ? " && chown nobody '" + data + "/server.crt' '" + data + "/server.key'"
                          : std::string()));
    sql("postgres", "ALTER SYSTEM SET ssl = on");
    (void)query_one("postgres", "SELECT pg_reload_conf()");
  }
  void disable_tls() {
    sql("postgres", "ALTER SYSTEM RESET ssl");
    (void)query_one("postgres", "SELECT pg_reload_conf()");
  }

  // pg_ctl start / stop (fast: sessions are terminated, as on a real shutdown) / restart.
  void start() { pg_ctl("start -w -t 60 -l '" + dir_ + "/log' -o '" + server_options() + "'"); }
  void stop() {
    if (!dir_.empty()) pg_ctl("stop -m fast -w", /*check=*/false);
  }
  void restart() { pg_ctl("restart -m fast -w -t 60 -o '" + server_options() + "'"); }

 private:
  // Runs `statement` on database `db` in a connection of its own; with `rows`, returns the first
  // column of its first row. Throws with the server's message on failure.
  std::string run_query(const std::string& db, const std::string& statement, bool rows) const {
    PGconn* c = PQconnectdb(uri(db).c_str());
    if (PQstatus(c) != CONNECTION_OK) {
      std::string e = PQerrorMessage(c);
      PQfinish(c);
      throw std::runtime_error("test PostgreSQL: cannot connect to " + uri(db) + ": " + e);
    }
    PGresult* r = PQexec(c, statement.c_str());
    const ExecStatusType st = PQresultStatus(r);
    const bool ok =
        rows ? st == PGRES_TUPLES_OK : (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK);
    std::string value = ok && rows && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
    std::string e = PQerrorMessage(c);
    PQclear(r);
    PQfinish(c);
    if (!ok) throw std::runtime_error("test PostgreSQL: '" + statement + "' failed: " + e);
    return value;
  }

  PgServer() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln_pg_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    as_user_ = ::geteuid() == 0 ? "runuser -u nobody -- " : "";
    if (::geteuid() == 0) run("chown nobody '" + dir_ + "'");
    start_watchdog();
    // ctest runs each test case in a process of its own: initdb once per user into a template
    // beside the temporary directories, and copy it (cp -a keeps the owner and mode 0700).
    const std::string tmpl = (std::filesystem::temp_directory_path() /
                              ("kiln_pg_initdb_template_" + std::to_string(::geteuid())))
                                 .string();
    if (::access((tmpl + "/PG_VERSION").c_str(), F_OK) != 0) {
      run("cd '" + dir_ + "' && " + as_user_ + bin_dir() + "/initdb -D '" + dir_ +
          "/template' -U kiln --auth=trust -E UTF8 --no-sync >'" + dir_ + "/initdb.log' 2>&1");
      // Atomic: a concurrent test process either sees the whole template or makes its own.
      if (std::rename((dir_ + "/template").c_str(), tmpl.c_str()) != 0) {
        run("rm -rf '" + dir_ + "/template'");
      }
    }
    run("cp -a '" + tmpl + "' '" + dir_ + "/data'");
    // A free port, chosen by the kernel; another process could take it before the server binds
    // it, so a failed start tries another one.
    for (int attempt = 0;; ++attempt) {
      port_ = free_port();
      try {
        start();
        return;
      } catch (const std::exception&) {
        if (attempt == 4) throw;
      }
    }
  }

  std::string server_options() const {
    // No Unix socket (its directory would have to be writable by the server's user); fsync off:
    // tests need no durability across a power loss, and it makes CREATE DATABASE fast.
    return "-p " + std::to_string(port_) +
           " -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c fsync=off "
           "-c max_connections=200";
  }

  void pg_ctl(const std::string& args, bool check = true) const {
    std::string cmd = "cd '" + dir_ + "' && " + as_user_ + bin_dir() + "/pg_ctl -D '" + dir_ +
                      "/data' " + args + " >>'" + dir_ + "/pg_ctl.log' 2>&1";
    if (check) {
      run(cmd);
    } else {
      (void)std::system(cmd.c_str());
    }
  }

  void run(const std::string& cmd) const {
    if (std::system(cmd.c_str()) != 0) {
      std::string log = "(no server log)";
      if (!dir_.empty()) {
        std::string tail = "tail -n 20 '" + dir_ + "/log' '" + dir_ + "/initdb.log' '" + dir_ +
                           "/pg_ctl.log' 2>/dev/null";
        log = capture(tail);
      }
      throw std::runtime_error("test PostgreSQL: '" + cmd + "' failed:\n" + log);
    }
  }

  static std::string capture(const std::string& cmd) {
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
      ::pclose(p);
    }
    return out;
  }

  static int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd);
      throw std::runtime_error("test PostgreSQL: no free port on 127.0.0.1");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
  }

  // The watchdog: a shell in its own session reading the pipe until end of file, then stopping
  // the server and removing the directory.
  void start_watchdog() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const std::string script = "cat >/dev/null; cd /; " + as_user_ + bin_dir() + "/pg_ctl -D '" +
                               dir_ + "/data' stop -m immediate >/dev/null 2>&1; rm -rf '" + dir_ +
                               "'";
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::setsid();
      ::dup2(fds[0], 0);  // dup2 clears close-on-exec on fd 0
      int null_fd = ::open("/dev/null", O_WRONLY);
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
      ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[0]);
    watchdog_write_ = fds[1];
  }

  std::string dir_;
  std::string as_user_;
  int port_ = 0;
  int watchdog_write_ = -1;
};

}  // namespace kiln::testing
