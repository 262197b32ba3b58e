#include "exchange/measure_result.h"

#include <chrono>

#include "common/check.h"
#include "exchange/wire_error.h"

namespace kiln {

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

MeasureResult MeasureResult::failure(MeasureError error, std::string message) {
  MeasureResult m;
  m.error = error;
  m.message = std::move(message);
  m.timestamp = unix_seconds_now();
  return m;
}

MeasureResult MeasureResult::of_failed_build(const BuildResult& build) {
  KILN_CHECK(build.error != MeasureError::kNoError) << "of_failed_build of a successful build";
  MeasureResult m = failure(build.error, build.message);
  m.build_seconds = build.build_seconds;
  return m;
}

void MeasureResult::encode(wire::Writer& w) const {
  w.i64(static_cast<int64_t>(error));
  w.str(message);
  w.f64s(costs);
  w.f64(relative_error);
  w.f64(build_seconds);
  w.f64(run_seconds);
  w.f64(timestamp);
  w.u64(runner_lost ? 1 : 0);
}

Result<MeasureResult> MeasureResult::decode(wire::Reader& r) {
  MeasureResult m;
  int64_t error = r.i64();
  m.message = r.str();
  m.costs = r.f64s();
  m.relative_error = r.f64();
  m.build_seconds = r.f64();
  m.run_seconds = r.f64();
  m.timestamp = r.f64();
  m.runner_lost = r.u64() != 0;
  KILN_ASSIGN_OR_RETURN(m.error, wire::decoded_error(r, error, "measure result"));
  return m;
}

}  // namespace kiln
