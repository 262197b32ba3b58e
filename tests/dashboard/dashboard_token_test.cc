// The dashboard's token (dashboard/token.h): where it comes from, that a generated one is
// private and kept across starts, that a readable-by-others file is refused, and the check.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "dashboard/token.h"
#include "farm/security.h"
#include "tests/temp_dir.h"

namespace kiln::dashboard {
namespace {

int mode_of(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 0777) : -1;
}

TEST(DashboardToken, GeneratedNextToTheStorePrivateAndKept) {
  testing::TempDir dir;
  const std::string db = dir.file("k.db");
  Result<DashboardToken> first = dashboard_token("", "", db);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->path, db + ".http-token");
  EXPECT_EQ(first->token.size(), 64u);
  EXPECT_EQ(mode_of(first->path), 0600);
  Result<DashboardToken> again = dashboard_token("", "", db);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->token, first->token);
}

TEST(DashboardToken, FromAFileOrTheCertsDir) {
  testing::TempDir dir;
  const std::string file = dir.write("t", std::string(40, 'x') + "\n");
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  Result<DashboardToken> t = dashboard_token(file, dir.file("certs"), dir.file("k.db"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->token, std::string(40, 'x'));

  ASSERT_TRUE(farm::init_certs(dir.file("certs")).ok());
  Result<DashboardToken> c = dashboard_token("", dir.file("certs"), dir.file("k.db"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  Result<std::string> grpc_token = farm::read_token(dir.file("certs/token"));
  ASSERT_TRUE(grpc_token.ok());
  EXPECT_EQ(c->token, *grpc_token);  // the daemon's own bearer token
}

TEST(DashboardToken, RefusesAFileOthersCanReadAndBadTokens) {
  testing::TempDir dir;
  const std::string open_file = dir.write("open", std::string(40, 'x'));
  ASSERT_EQ(::chmod(open_file.c_str(), 0644), 0);
  Result<DashboardToken> t = dashboard_token(open_file, "", dir.file("k.db"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("chmod 600 " + open_file), std::string::npos)
      << t.status().message();

  const std::string short_file = dir.write("short", "abc");
  ASSERT_EQ(::chmod(short_file.c_str(), 0600), 0);
  t = dashboard_token(short_file, "", dir.file("k.db"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("shorter than 32"), std::string::npos);

  t = dashboard_token(dir.file("absent"), "", dir.file("k.db"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("absent"), std::string::npos);
}

TEST(DashboardToken, Matches) {
  const std::string token(64, 'a');
  EXPECT_TRUE(token_matches(token, token));
  EXPECT_FALSE(token_matches(std::string(63, 'a') + "b", token));
  EXPECT_FALSE(token_matches(token + "a", token));
  EXPECT_FALSE(token_matches("", token));
  EXPECT_FALSE(token_matches("", ""));  // no token configured matches nothing
}

}  // namespace
}  // namespace kiln::dashboard
