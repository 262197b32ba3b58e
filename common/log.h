// kiln's log: the servers (kiln serve, tracker, runner, builder) and long-running commands
// (kiln tune) report what happens through spdlog's default logger, one stderr line per event:
//   2026-12-02T14:05:01.123Z kiln tracker info: runner r1 (key x86) registered
// The time is UTC with milliseconds, so lines of several machines of a farm sort together.
// Results a command prints for its user (tables, "listening on", the live line) stay on stdout.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln::log {

enum class Level { kDebug, kInfo, kWarn, kError, kOff };

// "debug", "info", "warn" (or "warning"), "error", "off" -> the level; kInvalidArgument naming
// the accepted names otherwise.
Result<Level> parse_level(std::string_view text);

// The level's name as parse_level reads it.
const char* level_name(Level level);

// Makes spdlog's default logger the stderr log of `program` (e.g. "kiln tracker") at `level`,
// replacing the previous default logger. Lines are flushed at once (a server is often stopped
// by a signal, and a log that ends early hides why).
void init(std::string_view program, Level level);

}  // namespace kiln::log
