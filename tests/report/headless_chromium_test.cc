// tests/support/headless_chromium.h: the checks the report and dashboard tests rely on can fail:
// a blank page is recognised as blank, a drawn one is not, and a Chromium that is not there is
// not found.
#include "tests/support/headless_chromium.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "tests/temp_dir.h"

namespace kiln::testing {
namespace {

TEST(ReportHeadlessChromium, BlankPageIsBlankAndADrawnOneIsNot) {
  KILN_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  std::ofstream(dir.file("blank.html")) << "<!DOCTYPE html><html><body></body></html>\n";
  std::ofstream(dir.file("drawn.html"))
      << "<!DOCTYPE html><html><body><svg width=\"300\" height=\"200\"><circle cx=\"100\" "
         "cy=\"100\" r=\"80\" fill=\"#d62728\"/></svg><p>text</p></body></html>\n";
  ChromiumOptions small;
  small.width = 400;
  small.height = 300;
  std::string error;
  for (const char* name : {"blank", "drawn"}) {
    const std::string png = dir.file(std::string(name) + ".png");
    ChromiumRun run =
        screenshot(chromium, "file://" + dir.file(std::string(name) + ".html"), png, small);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto stats = png_stats(png, &error);
    ASSERT_TRUE(stats.has_value()) << error;
    EXPECT_EQ(stats->width, 400);
    EXPECT_EQ(stats->height, 300);
    if (std::string(name) == "blank") {
      EXPECT_EQ(stats->distinct_colors, 1);
      EXPECT_EQ(stats->pixels_unlike_corner, 0);
    } else {
      EXPECT_GT(stats->distinct_colors, 2);
      EXPECT_GT(stats->pixels_unlike_corner, 10000);  // the circle alone is ~20000 pixels
    }
  }
  std::ofstream(dir.file("not.png")) << "not a PNG";
  EXPECT_FALSE(png_stats(dir.file("not.png"), &error).has_value());
  EXPECT_NE(error.find("not.png"), std::string::npos) << error;
}

TEST(ReportHeadlessChromium, AnAbsentChromiumIsNotFound) {
  const char* before = std::getenv("KILN_CHROMIUM");
  std::string saved = before ? before : "";
  setenv("KILN_CHROMIUM", "/nonexistent/chromium", 1);
  EXPECT_EQ(find_chromium(), "");
  if (before) {
    setenv("KILN_CHROMIUM", saved.c_str(), 1);
  } else {
    unsetenv("KILN_CHROMIUM");
  }
}

}  // namespace
}  // namespace kiln::testing
