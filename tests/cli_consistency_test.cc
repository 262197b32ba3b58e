// The CLI as one tool: the closest command named for a typo, the bash completion and the man page
// generated from the CLI definitions (and working: the completion is run by bash, the page by
// man), one --token-file name, `best --help` showing --db required without a default, and
// `kiln tune MODEL --time` counting the tuning time of every run of the same command.
#include <gtest/gtest.h>

#include <string>

#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using testing::run_kiln;
using testing::run_shell;
using testing::TempDir;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)
#define EXPECT_LACKS(text, part) EXPECT_EQ((text).find(part), std::string::npos) << (text)

TEST(CliConsistency, AnUnknownCommandNamesTheClosestOne) {
  testing::CommandResult r = run_kiln("tnue --workload dense:M=1,N=1,K=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.output, "kiln: unknown command 'tnue' (did you mean tune?)");
  testing::CommandResult far = run_kiln("frobnicate");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_HAS(far.output, "unknown command 'frobnicate'; kiln --help lists them");
  EXPECT_LACKS(far.output, "did you mean");
}

TEST(CliConsistency, BashCompletionFromTheCliDefinitionsCompletesCommandsAndOptions) {
  TempDir dir;
  testing::CommandResult gen = run_kiln("completion bash > " + dir.file("kiln.bash"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  auto complete = [&](const std::string& words, int cword) {
    return run_shell("bash -c 'source " + dir.file("kiln.bash") + "; COMP_WORDS=(" + words +
                     "); COMP_CWORD=" + std::to_string(cword) +
                     "; _kiln; echo \"${COMPREPLY[*]}\"'")
        .output;
  };
  EXPECT_EQ(complete("kiln tu", 1), "tune\n");
  EXPECT_HAS(complete("kiln compile --rec", 2), "--records-from");
  EXPECT_HAS(complete("kiln farm st", 2), "status");
  EXPECT_HAS(complete("kiln farm status --tok", 3), "--token-file");
  EXPECT_LACKS(complete("kiln measure-", 1), "measure-worker");  // internal commands stay hidden
  testing::CommandResult bad = run_kiln("completion fish");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

TEST(CliConsistency, TheManPageListsEveryCommandAndRendersWithMan) {
  TempDir dir;
  ASSERT_EQ(run_kiln("man > " + dir.file("kiln.1")).exit_code, 0);
  testing::CommandResult page =
      run_shell("LANG=C MANWIDTH=100 man -l " + dir.file("kiln.1") + " 2>/dev/null | cat");
  ASSERT_EQ(page.exit_code, 0) << page.output;
  for (const char* cmd : {"kiln tune", "kiln compile", "kiln best", "kiln farm status",
                          "kiln serve", "kiln completion"}) {
    EXPECT_HAS(page.output, cmd);
  }
  EXPECT_HAS(page.output, "--records-from");
  EXPECT_LACKS(page.output, "measure-worker");
}

TEST(CliConsistency, BestHelpShowsDbRequiredWithoutADefault) {
  testing::CommandResult r = run_kiln("best --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t at = r.output.find("--db");
  ASSERT_NE(at, std::string::npos) << r.output;
  std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_HAS(line, "REQUIRED");
  EXPECT_LACKS(line, "kiln.db");
}

TEST(CliConsistency, EveryTokenOptionIsTokenFileWithTheOldNamesAsAliases) {
  for (const char* cmd : {"farm status", "jobs", "submit", "runner", "tune"}) {
    testing::CommandResult help = run_kiln(std::string(cmd) + " --help");
    EXPECT_HAS(help.output, "--token-file") << cmd;
  }
  // The old name still parses (the server is unreachable: the error is about that).
  TempDir dir;
  std::string token = dir.write("token", "0123456789abcdef0123456789abcdef");
  testing::CommandResult old =
      run_kiln("jobs --server 127.0.0.1:1 --token " + token + " --timeout 0.2");
  EXPECT_NE(old.exit_code, 0);
  EXPECT_LACKS(old.output, "not expected");
}

}  // namespace
}  // namespace kiln
