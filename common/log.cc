#include "common/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace kiln::log {

namespace {

spdlog::level::level_enum spdlog_level(Level level) {
  switch (level) {
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

Result<Level> parse_level(std::string_view text) {
  if (text == "debug") return Level::kDebug;
  if (text == "info") return Level::kInfo;
  if (text == "warn" || text == "warning") return Level::kWarn;
  if (text == "error") return Level::kError;
  if (text == "off") return Level::kOff;
  return InvalidArgument("log level '" + std::string(text) +
                         "': expected debug, info, warn, error or off");
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    case Level::kOff:
      return "off";
  }
  return "info";
}

void init(std::string_view program, Level level) {
  // The mutex sink: gRPC's threads, the job threads and the main thread all log.
  auto logger = std::make_shared<spdlog::logger>(std::string(program),
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %n %l: %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog_level(level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace kiln::log
