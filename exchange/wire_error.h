// The last step of decoding a result from the wire (exchange/build_result.h,
// exchange/measure_result.h): the frame must have held every field, and the error code must be
// one of AutoTVM's MeasureErrorNo values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/measure_error.h"
#include "common/status.h"
#include "common/wire.h"

namespace kiln::wire {

// The MeasureError `code` read from `r`, or kInvalidArgument naming `what` ("build result") and
// saying the frame is truncated or the code unknown.
inline Result<MeasureError> decoded_error(const Reader& r, int64_t code, std::string_view what) {
  std::string where = std::string(what) + " on the wire: ";
  if (!r.ok()) return InvalidArgument(where + "the frame is truncated");
  if (code < 0 || code > kMaxMeasureError) {
    return InvalidArgument(where + "unknown error code " + std::to_string(code));
  }
  return static_cast<MeasureError>(code);
}

}  // namespace kiln::wire
