#include "common/duration.h"

#include <cmath>
#include <exception>

namespace kiln {

Result<double> parse_duration(const std::string& what, const std::string& text) {
  Status bad = InvalidArgument(what + ": expected a duration such as 8h, 30m, 90s or 1h30m, got '" +
                               text + "'");
  double total = 0;
  size_t pos = 0;
  bool any = false;
  while (pos < text.size()) {
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text.substr(pos), &used);
    } catch (const std::exception&) {
      return bad;
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
    total += value * unit;
    any = true;
  }
  if (!any || total <= 0) return bad;
  return total;
}

}  // namespace kiln
