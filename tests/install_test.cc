// `make install`'s rules (cmake/install.cmake) run on this build: the binary, the man page and
// bash completion generated from the CLI definitions, and configs/ with the systemd units, each
// where a Debian system looks for it under the prefix; the installed kiln runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

TEST(Install, CmakeInstallPlacesBinaryManPageCompletionAndConfigs) {
  const fs::path build = fs::path(KILN_BINARY).parent_path().parent_path();
  testing::TempDir prefix;
  testing::CommandResult docs =
      testing::run_shell("cmake --build " + build.string() + " --target kiln_docs");
  ASSERT_EQ(docs.exit_code, 0) << docs.output;
  testing::CommandResult install =
      testing::run_shell("cmake --install " + build.string() + " --prefix " + prefix.path());
  ASSERT_EQ(install.exit_code, 0) << install.output;
  const fs::path root = prefix.path();
  for (const char* file :
       {"bin/kiln", "share/man/man1/kiln.1", "share/bash-completion/completions/kiln",
        "share/kiln/configs/farm/kiln-runner@.service", "share/kiln/configs/farm/farm.env",
        "share/kiln/configs/jobs/model-overnight.yaml"}) {
    EXPECT_TRUE(fs::is_regular_file(root / file)) << file << "\n" << install.output;
  }
  testing::CommandResult version = testing::run_shell((root / "bin/kiln").string() + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.output.find("kiln "), std::string::npos) << version.output;
  testing::CommandResult page =
      testing::run_shell("man -l " + (root / "share/man/man1/kiln.1").string() + " | cat");
  EXPECT_NE(page.output.find("kiln compile"), std::string::npos) << page.output;
}

}  // namespace
}  // namespace kiln
