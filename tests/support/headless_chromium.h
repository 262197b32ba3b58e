// Headless Chromium for tests (Debian's `chromium` package): render a page to a PNG screenshot
// or dump its DOM after scripts ran, with a time limit, and with the network unusable unless a
// test allows it (a proxy on a closed port and a resolver that finds nothing), so a page that
// tries to fetch anything from outside fails to. Chromium runs with --no-sandbox (CI runs tests as
// root, where its sandbox refuses to start) and a fresh profile per call.
//
// Tests start with KILN_REQUIRE_CHROMIUM(var): the binary, or the test is skipped (GTEST_SKIP)
// when there is none, unless the environment says CI=true, where a missing Chromium is a failure.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace kiln::testing {

struct ChromiumOptions {
  int width = 1280;
  int height = 4000;
  double timeout_s = 45;
  bool offline = true;                   // the network unusable (see above)
  std::vector<std::string> extra_flags;  // e.g. --virtual-time-budget=5000
};

struct ChromiumRun {
  int exit_code = -1;  // -1: killed at the time limit or could not start
  std::string out;     // standard output (the DOM for dump_dom)
  std::string err;     // standard error, for messages
};

// The chromium binary ($KILN_CHROMIUM, else chromium or chromium-browser on PATH), or "".
std::string find_chromium();

// Runs chromium headless on `url` (e.g. file:///tmp/r.html) writing a PNG to `png_path`.
ChromiumRun screenshot(const std::string& chromium, const std::string& url,
                       const std::string& png_path, const ChromiumOptions& options = {});
// Runs chromium headless on `url` and returns the serialized DOM on `out`.
ChromiumRun dump_dom(const std::string& chromium, const std::string& url,
                     const ChromiumOptions& options = {});

// A decoded PNG's summary: size, how many distinct colours, and how many pixels differ from the
// top-left one (a blank page has 1 colour and 0 such pixels).
struct PngStats {
  int width = 0;
  int height = 0;
  int64_t distinct_colors = 0;  // capped at 4096
  int64_t pixels_unlike_corner = 0;
};
// nullopt (and `error` set) when the file cannot be decoded.
std::optional<PngStats> png_stats(const std::string& path, std::string* error);

}  // namespace kiln::testing

// In a test body: the chromium binary, or return after GTEST_SKIP (not in CI) / FAIL (in CI).
#define KILN_REQUIRE_CHROMIUM(var)                                                          \
  std::string var = ::kiln::testing::find_chromium();                                       \
  if (var.empty()) {                                                                        \
    const char* ci = std::getenv("CI");                                                     \
    if (ci && std::string(ci) == "true") {                                                  \
      FAIL() << "chromium is not installed (scripts/install-deps.sh installs it); CI=true"; \
    }                                                                                       \
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";      \
  }
