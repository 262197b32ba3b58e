#include "tests/support/headless_chromium.h"

#include <png.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace kiln::testing {

namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// Runs chromium with `flags` on `url` under coreutils' timeout, in a fresh profile directory.
ChromiumRun run_chromium(const std::string& chromium, const std::vector<std::string>& flags,
                         const std::string& url, const ChromiumOptions& o) {
  ChromiumRun run;
  std::string pattern = (fs::temp_directory_path() / "kiln_chromium_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    run.err = "cannot create a profile directory";
    return run;
  }
  const fs::path profile = pattern;
  std::vector<std::string> args = {
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--hide-scrollbars",
      "--mute-audio",
      "--user-data-dir=" + profile.string(),
      "--window-size=" + std::to_string(o.width) + "," + std::to_string(o.height)};
  if (o.offline) {
    // Any request goes to a proxy on a closed port, and no name resolves.
    args.push_back("--proxy-server=127.0.0.1:9");
    args.push_back("--host-resolver-rules=MAP * ~NOTFOUND");
  }
  for (const std::string& f : o.extra_flags) args.push_back(f);
  for (const std::string& f : flags) args.push_back(f);
  args.push_back(url);
  std::string command =
      "timeout -k 5 " + std::to_string(static_cast<int>(o.timeout_s)) + " " + shell_quote(chromium);
  for (const std::string& a : args) command += " " + shell_quote(a);
  const fs::path err_file = profile / "stderr.txt";
  command += " 2>" + shell_quote(err_file.string());
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe) {
    std::array<char, 65536> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) run.out.append(buf.data(), n);
    int status = pclose(pipe);
    run.exit_code = WIFEXITED(status) && WEXITSTATUS(status) != 124 ? WEXITSTATUS(status) : -1;
  } else {
    run.err = "cannot start " + chromium;
  }
  std::ifstream err(err_file);
  std::stringstream text;
  text << err.rdbuf();
  run.err += text.str();
  std::error_code ec;
  fs::remove_all(profile, ec);
  return run;
}

}  // namespace

std::string find_chromium() {
  if (const char* env = std::getenv("KILN_CHROMIUM"); env && *env) {
    return executable(env) ? env : "";
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      std::string candidate = dir + "/" + name;
      if (executable(candidate)) return candidate;
    }
  }
  return "";
}

ChromiumRun screenshot(const std::string& chromium, const std::string& url,
                       const std::string& png_path, const ChromiumOptions& options) {
  return run_chromium(chromium, {"--screenshot=" + png_path}, url, options);
}

ChromiumRun dump_dom(const std::string& chromium, const std::string& url,
                     const ChromiumOptions& options) {
  return run_chromium(chromium, {"--dump-dom"}, url, options);
}

std::optional<PngStats> png_stats(const std::string& path, std::string* error) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    *error = path + ": " + image.message;
    return std::nullopt;
  }
  image.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) {
    *error = path + ": " + image.message;
    png_image_free(&image);
    return std::nullopt;
  }
  PngStats stats;
  stats.width = static_cast<int>(image.width);
  stats.height = static_cast<int>(image.height);
  std::set<uint32_t> colors;
  auto pixel = [&](size_t i) {
    return static_cast<uint32_t>(pixels[4 * i]) << 24 |
           static_cast<uint32_t>(pixels[4 * i + 1]) << 16 |
           static_cast<uint32_t>(pixels[4 * i + 2]) << 8 | pixels[4 * i + 3];
  };
  const size_t n = static_cast<size_t>(image.width) * image.height;
  const uint32_t corner = n > 0 ? pixel(0) : 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t p = pixel(i);
    if (p != corner) ++stats.pixels_unlike_corner;
    if (colors.size() < 4096) colors.insert(p);
  }
  stats.distinct_colors = static_cast<int64_t>(colors.size());
  return stats;
}

}  // namespace kiln::testing
