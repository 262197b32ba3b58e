#include "common/duration.h"

#include <cctype>
#include <cmath>
#include <exception>

namespace kiln {

Result<double> parse_duration(const std::string& what, const std::string& text) {
  Status bad = InvalidArgument(
      what + ": expected a positive duration such as 8h, 30m, 90s or 1h30m, got '" + text + "'");
  double total = 0;
  size_t pos = 0;
  bool any = false;
  double last_unit = 0;  // units must shrink: each at most once, in the order h, m, s
  while (pos < text.size()) {
    // std::stod skips leading blanks and accepts "inf", "nan" and hex: a duration is digits.
    if (!std::isdigit(static_cast<unsigned char>(text[pos])) && text[pos] != '.') return bad;
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text.substr(pos), &used);
    } catch (const std::exception&) {
      return bad;  // no digits, or out of double's range
    }
    if (used == 0 || !std::isfinite(value) || value < 0) return bad;
    pos += used;
    double unit = 1;
    if (pos < text.size()) {
      char u = text[pos];
      if (u == 'h')
        unit = 3600;
      else if (u == 'm')
        unit = 60;
      else if (u == 's')
        unit = 1;
      else
        return bad;
      ++pos;
    } else if (any) {
      return bad;  // "1h30" is ambiguous
    }
    if (any && unit >= last_unit) return bad;  // "1h1h", "30m1h"
    last_unit = unit;
    total += value * unit;
    any = true;
  }
  if (!any || !std::isfinite(total) || total <= 0) return bad;
  if (total > kMaxDurationSeconds) {
    return InvalidArgument(what + ": '" + text + "' is longer than 10 years");
  }
  return total;
}

}  // namespace kiln
