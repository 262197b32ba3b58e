// open_store / open_job_store (store/open_store.h): a location names its backend. Plain paths
// and sqlite:// URLs open SQLite files; an unknown scheme is refused naming it, before anything
// is created, by the library and by kiln's commands (exit code 2).
#include "store/open_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/run_kiln.h"
#include "tests/store_samples.h"
#include "tests/temp_dir.h"

namespace kiln::store {
namespace {

namespace fs = std::filesystem;

using kiln::testing::TempDir;

TEST(OpenStore, APathAndItsSqliteUrlAreTheSameStore) {
  TempDir dir;
  const std::string path = dir.file("k.db");
  auto by_url = open_store("sqlite://" + path);
  ASSERT_TRUE(by_url.ok()) << by_url.status().message();
  ASSERT_TRUE((*by_url)->append({kiln::testing::make_record("dense:K=8,M=8,N=8", 0, {1e-3})}).ok());
  EXPECT_EQ((*by_url)->path(), path);  // errors name the file, as with a plain path
  auto by_path = open_store(path, /*read_only=*/true);
  ASSERT_TRUE(by_path.ok()) << by_path.status().message();
  EXPECT_EQ(*(*by_path)->count(), 1);
  auto jobs = open_job_store("sqlite://" + path);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_TRUE((*jobs)->add("j", "spec", "", 0, 1).ok());
}

TEST(OpenStore, AColonWithoutASchemeIsPartOfAFileName) {
  TempDir dir;
  const std::string path = dir.file("a:b.db");
  auto store = open_store(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_TRUE(fs::exists(path));
}

TEST(OpenStore, AnUnknownSchemeIsRefusedNamingItAndCreatesNothing) {
  TempDir dir;
  const std::string url = "mysql://" + dir.file("k.db");
  for (bool read_only : {false, true}) {
    auto store = open_store(url, read_only);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(store.status().message().find("unknown scheme 'mysql'"), std::string::npos)
        << store.status().message();
    EXPECT_NE(store.status().message().find(url), std::string::npos) << store.status().message();
    auto jobs = open_job_store(url, read_only);
    ASSERT_FALSE(jobs.ok());
    EXPECT_NE(jobs.status().message().find("unknown scheme 'mysql'"), std::string::npos);
  }
  auto empty = open_store("sqlite://");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("names no file"), std::string::npos)
      << empty.status().message();
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(OpenStore, KilnCommandsRefuseAnUnknownSchemeAsBadInput) {
  TempDir dir;
  const std::string url = "mysql://" + dir.file("k.db");
  for (const std::string& command :
       {"best --db " + url, "export --db " + url + " -o " + dir.file("out.log")}) {
    testing::CommandResult r = testing::run_kiln(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("unknown scheme 'mysql'"), std::string::npos) << r.output;
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace kiln::store
