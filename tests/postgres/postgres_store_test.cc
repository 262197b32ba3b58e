// The PostgreSQL store beyond the conformance suite: its schema (versioned, another
// application's database refused, a newer kiln's refused), reconnection across a server
// restart and a bounded error when the server stays down, and real kiln processes on one
// PostgreSQL store: two `kiln tune` never measuring a config twice, `kiln store copy` between
// SQLite and PostgreSQL both ways (idempotent), import and export.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <set>
#include <thread>

#include "store/job_store.h"
#include "store/open_store.h"
#include "tests/postgres/pg_server.h"
#include "tests/run_kiln.h"
#include "tests/store_samples.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

using kiln::testing::make_record;
using kiln::testing::PgServer;
using kiln::testing::TempDir;

class PostgresStore : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = PgServer::shared();
    if (!server_) GTEST_SKIP() << PgServer::skip_reason();
    uri_ = server_->new_database();
  }
  std::vector<Record> all(const std::string& location) {
    auto s = open_store(location, /*read_only=*/true);
    EXPECT_TRUE(s.ok()) << s.status().message();
    if (!s.ok()) return {};
    auto r = (*s)->records();
    return r.ok() ? *r : std::vector<Record>{};
  }
  PgServer* server_ = nullptr;
  std::string uri_;
  TempDir dir_;
};

TEST_F(PostgresStore, SchemaIsVersionedAndAReadOnlyOpenNeverCreatesIt) {
  auto ro = open_store(uri_, /*read_only=*/true);
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("empty database"), std::string::npos)
      << ro.status().message();
  auto s = open_store(uri_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(*(*s)->schema_version(), 2);
  // A newer kiln's store is not touched.
  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  server_->sql(db, "UPDATE kiln_meta SET value = '99' WHERE key = 'schema_version'");
  auto newer = open_store(uri_);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("newer kiln"), std::string::npos);
}

TEST_F(PostgresStore, AnotherApplicationsDatabaseIsRefusedUntouched) {
  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  server_->sql(db, "CREATE TABLE invoices (id int)");
  auto s = open_store(uri_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a kiln record store"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find(uri_), std::string::npos);
}

TEST_F(PostgresStore, RecordsAreAppendOnly) {
  auto s = open_store(uri_);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})}).ok());
  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  EXPECT_THROW(server_->sql(db, "DELETE FROM records"), std::runtime_error);
  EXPECT_EQ(*(*s)->count(), 1);
}

TEST_F(PostgresStore, PasswordIsNeverInAnError) {
  auto s = open_store("postgresql://kiln:s3cret@127.0.0.1:" + std::to_string(server_->port()) +
                      "/no_such_database");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().find("s3cret"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("no_such_database"), std::string::npos);
}

// A small tune whose every trial costs about a build.
const char* kTune =
    "tune --workload dense:M=32,N=64,K=32 --template dense_pack.x86 --number 1 --repeat 1 "
    "--cooldown-interval 0 --no-transfer";

// The password comes from PGPASSFILE (libpq's standard), never from the command line; without it
// the store is refused at once, naming the reason.
TEST_F(PostgresStore, ThePasswordComesFromPgpassfile) {
  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  const std::string role = "team_" + db;
  server_->add_password_role(role, "t0ps3cret", db);
  const std::string uri =
      "postgresql://" + role + "@127.0.0.1:" + std::to_string(server_->port()) + "/" + db;
  const std::string pgpass = dir_.write("pgpass", "127.0.0.1:" + std::to_string(server_->port()) +
                                                      ":" + db + ":" + role + ":t0ps3cret\n");
  ASSERT_EQ(::chmod(pgpass.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto refused = testing::run_kiln("best --db '" + uri + "' 2>&1 </dev/null");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("password"), std::string::npos) << refused.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  const std::string with_pgpass = "PGPASSFILE='" + pgpass + "' " + KILN_BINARY + " ";
  auto tuned =
      testing::run_shell(with_pgpass + kTune + " --tuner random --trials 4 --db '" + uri + "'");
  EXPECT_EQ(tuned.exit_code, 0) << tuned.output;
  auto best = testing::run_shell(with_pgpass + "best --db '" + uri + "'");
  EXPECT_EQ(best.exit_code, 0) << best.output;
  EXPECT_NE(best.output.find("dense_pack.x86"), std::string::npos) << best.output;
  EXPECT_EQ(best.output.find("t0ps3cret"), std::string::npos);
}

// The tokens that keep a lost COMMIT from being applied twice do not pile up: those older than a
// day (a retry comes within seconds) go when a store is opened for writing.
TEST_F(PostgresStore, OldCommitTokensArePruned) {
  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  {
    auto s = open_store(uri_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})}).ok());
  }
  server_->sql(db, "INSERT INTO kiln_commits VALUES ('old', extract(epoch from now()) - 90000)");
  EXPECT_EQ(server_->query_one(db, "SELECT count(*) FROM kiln_commits"), "2");
  auto reader = open_store(uri_, /*read_only=*/true);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(server_->query_one(db, "SELECT count(*) FROM kiln_commits"),
            "2");  // reads delete nothing
  auto s = open_store(uri_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(server_->query_one(db, "SELECT count(*) FROM kiln_commits WHERE token = 'old'"), "0");
  EXPECT_EQ(server_->query_one(db, "SELECT count(*) FROM kiln_commits"), "1");  // the recent one
  EXPECT_EQ(*(*s)->count(), 1);
}

// The server restarted between calls: an open store reconnects and loses nothing committed.
TEST_F(PostgresStore, ReconnectsAfterAServerRestart) {
  auto s = open_store(uri_);
  auto jobs = open_job_store(uri_);
  ASSERT_TRUE(s.ok() && jobs.ok());
  ASSERT_TRUE((*s)->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})}).ok());
  server_->restart();
  Status after = (*s)->append({make_record("dense:K=1,M=1,N=1", 1, {1.0})});
  ASSERT_TRUE(after.ok()) << after.message();
  EXPECT_EQ(*(*s)->count(), 2);
  auto id = (*jobs)->add("j", "spec", "/", 0, 1);
  ASSERT_TRUE(id.ok()) << id.status().message();
}

// A server that stays down: an error naming it after the bounded wait, not a hang.
TEST_F(PostgresStore, AServerThatStaysDownGivesAnErrorAfterABoundedWait) {
  auto s = open_store(uri_);
  ASSERT_TRUE(s.ok());
  ::setenv("KILN_STORE_RECONNECT_S", "2", 1);
  auto s2 = open_store(uri_);  // reads the window at open
  ::unsetenv("KILN_STORE_RECONNECT_S");
  ASSERT_TRUE(s2.ok());
  server_->stop();
  auto start = std::chrono::steady_clock::now();
  Status down = (*s2)->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})});
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  server_->start();
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.code(), StatusCode::kIo);
  EXPECT_NE(down.message().find("127.0.0.1"), std::string::npos) << down.message();
  EXPECT_LT(waited, 15);
  EXPECT_GE(waited, 1.5);
  // And once it is back, the same store carries on.
  ASSERT_TRUE((*s2)->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})}).ok());
}

TEST_F(PostgresStore, TwoKilnTunesOnOneStoreNeverMeasureAConfigTwice) {
  std::string args =
      std::string(kTune) + " --tuner random --seed 5 --trials 12 --db '" + uri_ + "'";
  testing::CommandResult a, b;
  std::thread first([&] { a = testing::run_kiln(args); });
  std::thread second([&] { b = testing::run_kiln(args); });
  first.join();
  second.join();
  ASSERT_EQ(a.exit_code, 0) << a.output;
  ASSERT_EQ(b.exit_code, 0) << b.output;
  std::vector<Record> records = all(uri_);
  std::set<int64_t> distinct;
  for (const Record& r : records) distinct.insert(r.config_index);
  EXPECT_EQ(distinct.size(), records.size()) << a.output << b.output;
  EXPECT_GE(records.size(), 12u);
  EXPECT_LE(records.size(), 24u);
}

// The server restarted while kiln tune runs: it reconnects and carries on, every committed
// record kept and no config measured twice.
TEST_F(PostgresStore, KilnTuneCarriesOnAcrossAServerRestart) {
  std::string args =
      std::string(kTune) + " --tuner random --seed 3 --trials 24 --db '" + uri_ + "'";
  testing::CommandResult tune;
  std::thread tuner([&] { tune = testing::run_kiln(args); });
  // Restart once the first records are in (the tuner is mid-run), or after 30 s at the latest.
  for (int i = 0; i < 300; ++i) {
    auto s = open_store(uri_, /*read_only=*/true);
    if (s.ok() && *(*s)->count() > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server_->restart();
  tuner.join();
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  std::vector<Record> records = all(uri_);
  std::set<int64_t> distinct;
  for (const Record& r : records) distinct.insert(r.config_index);
  EXPECT_EQ(distinct.size(), records.size()) << tune.output;
  EXPECT_EQ(records.size(), 24u) << tune.output;
}

TEST_F(PostgresStore, StoreCopyBothWaysIsIdempotent) {
  // A SQLite store with records of a job, the job and run times.
  const std::string sqlite_db = dir_.file("team.db");
  int64_t job = 0;
  {
    auto jobs = open_job_store(sqlite_db);
    auto s = open_store(sqlite_db);
    ASSERT_TRUE(jobs.ok() && s.ok());
    ASSERT_TRUE((*jobs)->add("first", "x: 1", "/d", 0, 10).ok());
    job = *(*jobs)->add("second", "x: 2", "/d", 5, 11);
    ASSERT_TRUE((*jobs)->set_state(job, JobState::kDone, "budget", 12).ok());
    Record r = make_record("dense:K=1,M=1,N=1", 0, {1.0});
    r.source = job_source(job);
    ASSERT_TRUE((*s)->append({r, make_record("dense:K=1,M=1,N=1", 1, {2.0})}).ok());
    RunTimes t = kiln::testing::make_run_times("run-1", "dense:K=1,M=1,N=1", 1);
    t.source = job_source(job);
    ASSERT_TRUE((*s)->add_run_times(t).ok());
  }
  // The PostgreSQL store already has a job of its own: the copied job is renumbered.
  {
    auto jobs = open_job_store(uri_);
    ASSERT_TRUE(jobs.ok()) << jobs.status().message();
    ASSERT_TRUE((*jobs)->add("theirs", "y", "/", 0, 1).ok());
  }
  auto copy = testing::run_kiln("store copy " + sqlite_db + " '" + uri_ + "'");
  ASSERT_EQ(copy.exit_code, 0) << copy.output;
  EXPECT_NE(copy.output.find("copied 2 records (0 already there), 2 jobs"), std::string::npos)
      << copy.output;
  auto again = testing::run_kiln("store copy " + sqlite_db + " '" + uri_ + "'");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("copied 0 records (2 already there), 0 jobs (2 already there), 0 "
                              "run times rows (1 already there)"),
            std::string::npos)
      << again.output;
  std::vector<Record> in_pg = all(uri_);
  ASSERT_EQ(in_pg.size(), 2u);
  auto pg_jobs = open_job_store(uri_, /*read_only=*/true);
  ASSERT_TRUE(pg_jobs.ok());
  auto listed = (*pg_jobs)->list();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[2].name, "second");
  EXPECT_EQ((*listed)[2].state, JobState::kDone);
  EXPECT_EQ(in_pg[0].source, job_source((*listed)[2].id));
  EXPECT_EQ(*(*pg_jobs)->count_records((*listed)[2].id), 1);

  // And back into a new SQLite file: the same records, jobs and run times.
  const std::string back = dir_.file("back.db");
  auto home = testing::run_kiln("store copy '" + uri_ + "' " + back);
  ASSERT_EQ(home.exit_code, 0) << home.output;
  std::vector<Record> in_back = all(back);
  ASSERT_EQ(in_back.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    Record expected = in_pg[i];
    expected.id = in_back[i].id;
    expected.source = in_back[i].source;  // renumbered to the new file's jobs
    EXPECT_EQ(in_back[i], expected);
  }
  auto back_store = open_store(back, true);
  EXPECT_EQ((*back_store)->run_times()->size(), 1u);
}

TEST_F(PostgresStore, ImportAndExportAgainstPostgres) {
  const std::string sqlite_db = dir_.file("src.db");
  auto tune = testing::run_kiln(std::string(kTune) + " --tuner random --seed 1 --trials 4 --db " +
                                sqlite_db);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  const std::string log = dir_.file("log.json");
  ASSERT_EQ(testing::run_kiln("export --db " + sqlite_db + " --format kiln -o " + log).exit_code,
            0);
  auto imported = testing::run_kiln("import " + log + " --db '" + uri_ + "'");
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_NE(imported.output.find("imported 4 records"), std::string::npos) << imported.output;
  auto again = testing::run_kiln("import " + log + " --db '" + uri_ + "'");
  EXPECT_NE(again.output.find("4 duplicates"), std::string::npos) << again.output;
  const std::string out = dir_.file("back.json");
  auto exported = testing::run_kiln("export --db '" + uri_ + "' --format kiln -o " + out);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("exported 4 records"), std::string::npos) << exported.output;
  auto best = testing::run_kiln("best --db '" + uri_ + "'");
  ASSERT_EQ(best.exit_code, 0) << best.output;
  EXPECT_NE(best.output.find("dense_pack.x86"), std::string::npos) << best.output;
}

// A store an older kiln wrote (schema version 1: jobs without owners) is migrated, every job
// kept; a read-only open refuses to read it until then.
TEST_F(PostgresStore, AVersion1StoreMigratesKeepingItsJobs) {
  {
    auto jobs = open_job_store(uri_);
    ASSERT_TRUE(jobs.ok()) << jobs.status().message();
    ASSERT_TRUE((*jobs)->add("old", "workloads: []", "/d", 4, 10).ok());
    ASSERT_TRUE((*jobs)->set_state(1, JobState::kRunning, "", 11).ok());
  }
  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  server_->sql(db,
               "ALTER TABLE jobs DROP COLUMN owner, DROP COLUMN lease_expires, DROP COLUMN "
               "request; UPDATE kiln_meta SET value = '1' WHERE key = 'schema_version'");
  auto ro = open_job_store(uri_, /*read_only=*/true);
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("older"), std::string::npos) << ro.status().message();
  auto jobs = open_job_store(uri_);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  auto row = (*jobs)->get(1);
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->name, "old");
  EXPECT_EQ(row->priority, 4);
  EXPECT_EQ(row->state, JobState::kRunning);
  EXPECT_EQ(row->owner, "");
  EXPECT_EQ(*(*open_store(uri_))->schema_version(), 2);
  EXPECT_TRUE(*(*jobs)->claim_job(1, "A", 10, 12));  // an ownerless running job is claimable
}

// sslmode=verify-full in the URI: the store's connection is TLS, and a server whose certificate
// another CA signed, or whose name is not the one connected to, is refused naming why.
TEST_F(PostgresStore, VerifyFullChecksTheServersCertificateAndName) {
  const std::string d = dir_.path();
  auto sh = [&](const std::string& cmd) {
    ASSERT_EQ(std::system(("cd '" + d + "' && " + cmd + " >>openssl.log 2>&1").c_str()), 0) << cmd;
  };
  sh("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=kiln-test-ca -keyout ca.key "
     "-out ca.pem");
  sh("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca -keyout other.key "
     "-out other.pem");
  sh("openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out "
     "server.csr");
  sh("printf 'subjectAltName=DNS:localhost\\n' > san.ext && openssl x509 -req -in server.csr "
     "-CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem");
  server_->enable_tls(d + "/server.pem", d + "/server.key");
  struct Plaintext {  // the next tests of this process see the server as it was
    PgServer* s;
    ~Plaintext() { s->disable_tls(); }
  } restore{server_};

  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  const std::string port = std::to_string(server_->port());
  const std::string good = "postgresql://kiln@localhost:" + port + "/" + db +
                           "?sslmode=verify-full&sslrootcert=" + d + "/ca.pem";
  {
    auto store = open_store(good);
    ASSERT_TRUE(store.ok()) << store.status().message();
    ASSERT_TRUE((*store)->append({make_record("dense:K=16,M=16,N=16", 1, {1e-3})}).ok());
    // kiln's connection, seen from the server, is encrypted.
    EXPECT_EQ(server_->query_one("postgres",
                                 "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING "
                                 "(pid) WHERE ssl AND datname = '" +
                                     db + "'"),
              "1");
  }
  auto tune = testing::run_kiln("best --db '" + good + "'");
  EXPECT_EQ(tune.exit_code, 0) << tune.output;

  // Refused at once: a certificate does not heal by waiting for the reconnection window.
  const auto t0 = std::chrono::steady_clock::now();
  auto other_ca = open_store("postgresql://kiln@localhost:" + port + "/" + db +
                             "?sslmode=verify-full&sslrootcert=" + d + "/other.pem");
  ASSERT_FALSE(other_ca.ok());
  EXPECT_NE(other_ca.status().message().find("certificate verify failed"), std::string::npos)
      << other_ca.status().message();
  auto wrong_name = open_store("postgresql://kiln@127.0.0.1:" + port + "/" + db +
                               "?sslmode=verify-full&sslrootcert=" + d + "/ca.pem");
  ASSERT_FALSE(wrong_name.ok());
  EXPECT_NE(wrong_name.status().message().find("does not match host name"), std::string::npos)
      << wrong_name.status().message();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
}

// No file is written beside a store that has no file: a dashboard token must be named, and
// exports go only under --export-dir.
TEST_F(PostgresStore, KilnServeOnAPostgresStoreWritesNoFileItWasNotTold) {
  auto serve =
      testing::run_kiln("serve --listen 127.0.0.1:0 --http 127.0.0.1:0 --db '" + uri_ + "'");
  EXPECT_EQ(serve.exit_code, 2) << serve.output;
  EXPECT_NE(serve.output.find("needs --http-token-file or --certs"), std::string::npos)
      << serve.output;
}

}  // namespace
}  // namespace kiln::store
