// Durations as people write them in options and job files: "8h", "30m", "90s", "1h30m" or a plain
// number of seconds.
#pragma once

#include <string>

#include "common/status.h"

namespace kiln {

// The longest duration accepted: 10 years. Longer is a typo (99999999999999999999h, 1e308),
// not a budget, and would overflow the arithmetic of deadlines made from it.
constexpr double kMaxDurationSeconds = 10.0 * 365 * 24 * 3600;

// Seconds, in (0, kMaxDurationSeconds]. Units go from larger to smaller, each at most once
// ("1h30m", not "30m1h" or "1h1h"); a plain number is seconds. kInvalidArgument "<what>: expected
// a positive duration such as 8h, 30m, 90s or 1h30m, got '<text>'" for anything else (empty,
// negative, zero, an unknown unit, "1h30" without its unit), or "<what>: ... is longer than 10
// years".
Result<double> parse_duration(const std::string& what, const std::string& text);

}  // namespace kiln
