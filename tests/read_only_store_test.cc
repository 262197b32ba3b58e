// kiln best / export / report on a store on read-only media: a read-only bind mount made in a
// private mount namespace (unshare -m), where SQLite cannot create the WAL store's shared-memory
// file beside it. Skipped where no such mount can be made (no CAP_SYS_ADMIN).
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_db.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"
#include "tests/tvm_log_lines.h"

namespace kiln {
namespace {

using testing::CommandResult;
using testing::run_kiln;
using testing::run_shell;
using testing::TempDir;

// `kiln args` with `dir` mounted read-only over itself (only for this command's namespace).
std::string on_read_only(const std::string& dir, const std::string& inner) {
  return "unshare -m sh -c 'mount --bind " + dir + " " + dir + " && mount -o remount,ro,bind " +
         dir + " " + dir + " && " + inner + "'";
}

CommandResult kiln_on_read_only(const std::string& dir, const std::string& args) {
  return run_shell(on_read_only(dir, std::string("exec ") + KILN_BINARY + " " + args));
}

class ReadOnlyStore : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directory(media);
    CommandResult probe = run_shell(on_read_only(media, "! touch " + media + "/probe"));
    if (probe.exit_code != 0) {
      GTEST_SKIP() << "cannot make a read-only mount here: " << probe.output;
    }
    const std::string log = dir.write("d.log", store::kDenseLine + "\n");
    CommandResult r = run_kiln("import " + log + " --db " + db);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // What a clean close leaves: the store alone, no -wal or -shm file.
    ASSERT_FALSE(std::filesystem::exists(db + "-shm"));
  }

  TempDir dir;
  std::string media = dir.file("media");
  std::string db = media + "/r.db";
};

TEST_F(ReadOnlyStore, BestExportAndReportReadIt) {
  CommandResult r = kiln_on_read_only(media, "best --db " + db);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dense_nopack.x86 dense:K=512,M=1,N=1000,bias=0"), std::string::npos)
      << r.output;
  r = kiln_on_read_only(media, "export --db " + db + " --format tvm");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(store::kDenseLine), std::string::npos) << r.output;
  const std::string html = dir.file("report.html");
  r = kiln_on_read_only(media, "report --db " + db + " -o " + html);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(html));
  // Nothing was written beside the store.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(media),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(ReadOnlyStore, AnOlderSchemaSaysItCannotBeMigratedInPlace) {
  const std::string old = media + "/v5.db";
  {
    auto db = store::sqlite::Database::open(old, false, 1000);
    ASSERT_TRUE(db.ok());
    std::vector<store::Migration> up_to_5(store::schema_migrations().begin(),
                                          store::schema_migrations().begin() + 5);
    ASSERT_TRUE(store::migrate(**db, up_to_5).ok());
  }
  CommandResult r = kiln_on_read_only(media, "best --db " + old);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("schema version 5 is older than this kiln's"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("cannot be migrated in place"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kiln
