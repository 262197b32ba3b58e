// Durations as people write them in options and job files: "8h", "30m", "90s", "1h30m" or a plain
// number of seconds.
#pragma once

#include <string>

#include "common/status.h"

namespace kiln {

// Seconds, > 0. kInvalidArgument "<what>: expected a duration such as 8h, 30m, 90s or 1h30m, got
// '<text>'" for anything else (negative, zero, an unknown unit, "1h30" without its unit).
Result<double> parse_duration(const std::string& what, const std::string& text);

}  // namespace kiln
