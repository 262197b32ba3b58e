#include "cli/base.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/log.h"
#include "farm/grpc_log.h"

namespace kiln::cli {

int exit_code_for(StatusCode code) {
  switch (code) {
    case StatusCode::kIo:
      return kIoError;
    case StatusCode::kInternal:
      return kInternalError;
    default:
      return kUsageError;
  }
}

namespace {

std::string format_bound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A CLI11 validator (it sees the text before conversion) with kiln's message.
CLI::Validator real_range(double min, double max, bool min_exclusive) {
  std::string range =
      std::string(min_exclusive ? "(" : "[") + format_bound(min) + ", " + format_bound(max) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        double v = std::strtod(begin, &end);
        bool ok = end != begin && *end == '\0' && errno == 0 && std::isfinite(v) &&
                  (min_exclusive ? v > min : v >= min) && v <= max;
        return ok ? "" : "expected a finite number in " + range + ", got '" + text + "'";
      },
      "NUMBER in " + range);
}

CLI::Validator integer_range(int64_t min, int64_t max) {
  std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(begin, &end, 10);
        bool ok = end != begin && *end == '\0' && errno == 0 && v >= min && v <= max;
        return ok ? "" : "expected an integer in " + range + ", got '" + text + "'";
      },
      "INT in " + range);
}

}  // namespace

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, double* value, double min,
                         double max, const std::string& help, bool min_exclusive) {
  return cmd->add_option(name, *value, help)
      ->check(real_range(min, max, min_exclusive))
      ->capture_default_str();
}

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, int* value, int64_t min,
                         int64_t max, const std::string& help) {
  return cmd->add_option(name, *value, help)->check(integer_range(min, max))->capture_default_str();
}

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, int64_t* value, int64_t min,
                         int64_t max, const std::string& help) {
  return cmd->add_option(name, *value, help)->check(integer_range(min, max))->capture_default_str();
}

CLI::Option* add_bounded(CLI::App* cmd, const std::string& name, std::optional<int64_t>* value,
                         int64_t min, int64_t max, const std::string& help) {
  return cmd->add_option(name, *value, help)->check(integer_range(min, max));
}

int max_n_parallel() {
  unsigned cores = std::thread::hardware_concurrency();
  return 4 * static_cast<int>(cores == 0 ? 1 : cores);
}

std::string self_binary() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw CommandError{"cannot find the kiln binary (/proc/self/exe)"};
  return std::string(self, n);
}

int run_command_line(CLI::App& app, const std::vector<std::pair<CLI::App*, Command>>& commands,
                     int argc, char** argv, const char* program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }
  log::init(program, log::Level::kInfo);
  farm::route_grpc_log(farm::HandshakeLog::kDebug);
  try {
    for (const auto& [cmd, run] : commands) {
      if (cmd->parsed()) return run();
    }
  } catch (const CommandError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.message.c_str());
    return e.exit_code;
  }
  return 0;
}

}  // namespace kiln::cli
