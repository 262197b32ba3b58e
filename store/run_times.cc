#include "store/run_times.h"

#include <cmath>

namespace kiln::store {

void RunTimes::add(const RunTimes& more) {
  trials += more.trials;
  errors += more.errors;
  build_s += more.build_s;
  run_s += more.run_s;
  store_s += more.store_s;
  wall_s += more.wall_s;
  if (cooldown_s && more.cooldown_s) {
    *cooldown_s += *more.cooldown_s;
  } else {
    cooldown_s.reset();
  }
}

const char* invalid_run_times_field(const RunTimes& t) {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(t.started)) return "started";
  if (bad(t.updated)) return "updated";
  if (t.trials < 0) return "trials";
  if (t.errors < 0) return "errors";
  if (bad(t.build_s)) return "build_s";
  if (bad(t.run_s)) return "run_s";
  if (t.cooldown_s && bad(*t.cooldown_s)) return "cooldown_s";
  if (bad(t.store_s)) return "store_s";
  if (bad(t.wall_s)) return "wall_s";
  return nullptr;
}

}  // namespace kiln::store
