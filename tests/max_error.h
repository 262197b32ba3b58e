// A running maximum of absolute errors that a NaN cannot hide in: std::max(err, NaN) keeps err,
// so a kernel writing NaN (reading memory nothing wrote, in a test that fills it with NaN) would
// pass a tolerance check made with it.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::testing {

// `err` raised to `diff`; infinity once any `diff` is NaN.
inline double max_error(double err, double diff) {
  return std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(err, diff);
}

}  // namespace kiln::testing
