// The SQLite store's own behaviour (what every backend does is in store_conformance_test.cc):
// records append-only even to direct SQL, schema versioning and migrations, read-only and corrupt
// files, and multi-process safety (a reader while a writer appends, two writers, a writer killed
// with SIGKILL mid-batch).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "store/open_store.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/store_samples.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

namespace fs = std::filesystem;

using kiln::testing::make_record;
using kiln::testing::TempDir;

std::unique_ptr<Store> open_or_die(const std::string& path, bool read_only = false) {
  auto store = open_store(path, read_only);
  EXPECT_TRUE(store.ok()) << store.status().message();
  return store.ok() ? std::move(store).value() : nullptr;
}

// Runs SQL on the file directly, bypassing Store; returns SQLite's result code.
int raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_busy_timeout(db, 5000);
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return rc;
}

TEST(SqliteStoreTest, RecordsCannotBeUpdatedOrDeletedEvenDirectly) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})}).ok());
  }
  EXPECT_NE(raw_exec(path, "UPDATE records SET mean_cost = 0"), SQLITE_OK);
  EXPECT_NE(raw_exec(path, "DELETE FROM records"), SQLITE_OK);
  auto store = open_or_die(path);
  EXPECT_EQ(*store->count(), 1);
}

TEST(SqliteStoreTest, SchemaIsVersionedAndMarked) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store);
    EXPECT_EQ(*store->schema_version(), latest_schema_version());
    EXPECT_EQ(latest_schema_version(), 7);
  }
  auto db = sqlite::Database::open(path, true, 1000);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->query_int("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(*(*db)->query_int("PRAGMA user_version"), 7);
  // Opening again does not re-run migrations (the table exists: it would fail).
  EXPECT_TRUE(open_or_die(path) != nullptr);
}

TEST(SqliteStoreTest, MigrationsApplyInOrderAndAtomically) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})}).ok());
  }
  // Test migrations after this kiln's last one (L): L+1 and L+2 apply, L+3 and L+4 fail.
  const int l = latest_schema_version();
  std::vector<Migration> next = schema_migrations();
  next.push_back({l + 1, "test: a new table", "CREATE TABLE extra (x INTEGER);"});
  next.push_back({l + 2, "test: a new index", "CREATE INDEX extra_x ON extra (x);"});
  {
    auto db = sqlite::Database::open(path, false, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(migrate(**db, next).ok());
    EXPECT_EQ(*(*db)->query_int("PRAGMA user_version"), l + 2);
    EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM records"), 1);
    EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'extra_x'"), 1);
  }
  // A failing migration leaves the previous version and schema untouched.
  std::vector<Migration> broken = next;
  broken.push_back({l + 3, "test: ok part", "CREATE TABLE more (y INTEGER);"});
  broken.push_back({l + 4, "test: broken", "CREATE TABLE nonsense ("});
  {
    auto db = sqlite::Database::open(path, false, 1000);
    Status s = migrate(**db, broken);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("schema version " + std::to_string(l + 4)), std::string::npos)
        << s.message();
    EXPECT_EQ(*(*db)->query_int("PRAGMA user_version"), l + 2);
    EXPECT_EQ(*(*db)->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'more'"), 0);
  }
  // This kiln refuses the newer file.
  auto store = open_store(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("newer kiln"), std::string::npos)
      << store.status().message();
  EXPECT_NE(store.status().message().find(path), std::string::npos);
  EXPECT_FALSE(open_store(path, /*read_only=*/true).ok());
}

TEST(SqliteStoreTest, ReadOnlyOpenReadsButDoesNotWriteOrCreate) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  auto missing = open_store(path, true);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
  EXPECT_FALSE(fs::exists(path));
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store->append({make_record("dense:K=1,M=1,N=1", 0, {1.0})}).ok());
  }
  auto ro = open_or_die(path, true);
  ASSERT_TRUE(ro);
  EXPECT_TRUE(ro->read_only());
  EXPECT_EQ(*ro->count(), 1);
  Status s = ro->append({make_record("dense:K=1,M=1,N=1", 1, {1.0})});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("read-only"), std::string::npos);
  EXPECT_TRUE(ro->check_integrity().ok());
  // An empty file is not a store yet, and a read-only open cannot make it one.
  std::ofstream(dir.file("empty.db")).close();
  EXPECT_FALSE(open_store(dir.file("empty.db"), true).ok());
}

// A store an older kiln wrote is brought to the latest version by a read-only open (best,
// export and report open read-only), its records kept.
TEST(SqliteStoreTest, ReadOnlyOpenMigratesAStoreOfAnOlderKiln) {
  TempDir dir;
  const std::string path = dir.file("old.db");
  std::vector<Migration> older = schema_migrations();
  older.pop_back();
  {
    auto db = sqlite::Database::open(path, false, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(migrate(**db, older).ok());
    ASSERT_EQ(raw_exec(path,
                       "INSERT INTO records (target, task_name, workload, config_index, entities, "
                       "error_no, costs, mean_cost, all_cost, timestamp, error_msg, flop, source) "
                       "VALUES ('llvm', 'dense_pack.x86', 'dense:K=1,M=1,N=1', 0, '[]', 0, "
                       "'[1.0]', 1.0, 1.0, 1.0, '', 2.0, 'old kiln')"),
              SQLITE_OK);
  }
  auto ro = open_or_die(path, /*read_only=*/true);
  ASSERT_TRUE(ro);
  EXPECT_TRUE(ro->read_only());
  EXPECT_EQ(*ro->schema_version(), latest_schema_version());
  EXPECT_EQ(*ro->count(), 1);
}

TEST(SqliteStoreTest, NonSqliteAndForeignFilesGiveErrorsNamingTheFile) {
  TempDir dir;
  const std::string text = dir.file("notes.txt");
  {
    std::ofstream out(text);
    for (int i = 0; i < 100; ++i) out << "this is a text file, not a database\n";
  }
  auto store = open_store(text);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(text), std::string::npos) << store.status().message();
  EXPECT_NE(store.status().message().find("not a SQLite database"), std::string::npos)
      << store.status().message();
  EXPECT_FALSE(open_store(text, true).ok());

  const std::string foreign = dir.file("other.db");
  ASSERT_EQ(raw_exec(foreign, "CREATE TABLE t (x); INSERT INTO t VALUES (1);"), SQLITE_OK);
  auto other = open_store(foreign);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("not a kiln record store"), std::string::npos)
      << other.status().message();
  EXPECT_NE(other.status().message().find(foreign), std::string::npos);
}

TEST(SqliteStoreTest, DamagedStoreGivesErrorsNotCrashes) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  {
    auto store = open_or_die(path);
    std::vector<Record> batch;
    for (int i = 0; i < 2000; ++i) batch.push_back(make_record("dense:K=1,M=1,N=1", i, {1.0}));
    ASSERT_TRUE(store->append(batch).ok());
  }  // the last connection checkpoints the WAL into the file
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    std::string garbage(3 * 4096, '\x5a');
    f.seekp(4 * 4096);
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto store = open_store(path);
  if (!store.ok()) {
    EXPECT_NE(store.status().message().find(path), std::string::npos);
    return;
  }
  bool any_error = false;
  for (Status s : {(*store)->check_integrity(), (*store)->records().status()}) {
    if (!s.ok()) {
      any_error = true;
      EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    }
  }
  EXPECT_TRUE(any_error);
}

// ---------------------------------------------------------------------------------------------
// Several processes.

constexpr int kBatchSize = 10;

std::vector<Record> numbered_batch(int batch_no) {
  std::vector<Record> batch;
  for (int i = 0; i < kBatchSize; ++i) {
    Record r = make_record("dense:K=1,M=1,N=1", batch_no * kBatchSize + i, {1e-3 * (i + 1)});
    r.source = "batch " + std::to_string(batch_no);
    batch.push_back(std::move(r));
  }
  return batch;
}

// Fails the test unless every batch in the store is complete.
void expect_whole_batches(Store& store) {
  auto rows = store.records();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  std::map<std::string, int> per_batch;
  for (const Record& r : *rows) ++per_batch[r.source];
  for (const auto& [source, n] : per_batch) EXPECT_EQ(n, kBatchSize) << source;
}

TEST(SqliteStoreProcessTest, ReaderSeesOnlyWholeBatchesWhileWriterAppends) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  // SQLite connections must not cross fork(): create the store, close it, then fork.
  ASSERT_TRUE(open_or_die(path));
  constexpr int kBatches = 100;
  pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    // Child: its own connection. Exit codes: 0 ok, 2 open failed, 3 torn or shrinking read.
    auto ro = open_store(path, true);
    if (!ro.ok()) _exit(2);
    int64_t last = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
    while (last < kBatches * kBatchSize && std::chrono::steady_clock::now() < deadline) {
      auto n = (*ro)->count();
      if (!n.ok() || *n % kBatchSize != 0 || *n < last) _exit(3);
      last = *n;
    }
    _exit(0);
  }
  auto writer = open_or_die(path);
  ASSERT_TRUE(writer);
  for (int b = 0; b < kBatches; ++b) ASSERT_TRUE(writer->append(numbered_batch(b)).ok());
  int status = 0;
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(writer->check_integrity().ok());
  EXPECT_EQ(*writer->count(), kBatches * kBatchSize);
  expect_whole_batches(*writer);
}

// Forks `n` child processes; child k runs body(k) and exits with its result. Waits for all of
// them and expects each to have exited with status 0.
void RunInChildren(int n, const std::function<int(int)>& body) {
  std::vector<pid_t> children;
  for (int k = 0; k < n; ++k) {
    pid_t pid = fork();
    if (pid < 0) {
      ADD_FAILURE() << "fork failed";
      break;
    }
    if (pid == 0) _exit(body(k));
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
}

TEST(SqliteStoreProcessTest, TwoWritersWaitForEachOther) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  ASSERT_TRUE(open_or_die(path));  // create it, so the children race only on appends
  constexpr int kBatchesEach = 40;
  RunInChildren(2, [&](int w) {
    auto store = open_store(path);
    if (!store.ok()) return 2;
    for (int b = 0; b < kBatchesEach; ++b) {
      if (!(*store)->append(numbered_batch(w * 1000 + b)).ok()) return 3;
    }
    return 0;
  });
  auto store = open_or_die(path);
  EXPECT_TRUE(store->check_integrity().ok());
  EXPECT_EQ(*store->count(), 2 * kBatchesEach * kBatchSize);
  expect_whole_batches(*store);
}

TEST(SqliteStoreProcessTest, ProcessesCreatingTheSameNewStoreAtOnceAllSucceed) {
  TempDir dir;
  const std::string path = dir.file("new.db");
  constexpr int kProcesses = 4;
  RunInChildren(kProcesses, [&](int p) {
    auto store = open_store(path);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().message().c_str());
      return 2;
    }
    return (*store)->append(numbered_batch(p)).ok() ? 0 : 3;
  });
  auto store = open_or_die(path);
  EXPECT_EQ(*store->schema_version(), latest_schema_version());
  EXPECT_EQ(*store->count(), kProcesses * kBatchSize);
  expect_whole_batches(*store);
}

TEST(SqliteStoreProcessTest, WriterKilledMidAppendLeavesOnlyWholeBatches) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  ASSERT_TRUE(open_or_die(path));
  int64_t seen = 0;
  for (int round = 0; round < 3; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto store = open_store(path);
      if (!store.ok()) _exit(2);
      for (int b = round * 100000;; ++b) {
        if (!(*store)->append(numbered_batch(b)).ok()) _exit(3);
      }
    }
    // Let it commit a few batches, then kill it wherever it is (often inside a transaction).
    auto reader = open_or_die(path, true);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (*reader->count() < seen + 5 * kBatchSize &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(3 + 7 * round));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself: " << status;

    auto store = open_or_die(path);
    ASSERT_TRUE(store);
    EXPECT_TRUE(store->check_integrity().ok());
    int64_t n = *store->count();
    EXPECT_GT(n, seen);
    EXPECT_EQ(n % kBatchSize, 0) << "a torn batch after kill -9";
    expect_whole_batches(*store);
    seen = n;
  }
}

}  // namespace
}  // namespace kiln::store
