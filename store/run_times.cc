#include "store/run_times.h"

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

}  // namespace kiln::store
