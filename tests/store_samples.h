// Sample records and run times for the store's tests (the conformance suite and the SQLite
// backend's own tests): well-formed values that a test varies one field of.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "store/record.h"
#include "store/run_times.h"

namespace kiln::testing {

// A record of `workload` for config `index` (entities derived from it) with `costs`; a failure
// when error_no != 0 (its message "it broke").
inline store::Record make_record(const std::string& workload, int64_t index,
                                 std::vector<double> costs, int error_no = 0,
                                 const std::string& target = "llvm -mcpu=znver5",
                                 const std::string& task = "dense_pack.x86") {
  store::Record r;
  r.target = target;
  r.task_name = task;
  r.workload = workload;
  r.config_index = index;
  r.entities = nlohmann::json::array({nlohmann::json::array({"tile_y", "sp", {-1, index + 1}}),
                                      nlohmann::json::array({"unroll", "ot", index % 2 == 0})});
  r.error_no = error_no;
  r.costs = std::move(costs);
  r.all_cost = 0.5309267044067383;
  r.timestamp = 1676344759.520081 + static_cast<double>(index);
  r.error_msg = error_no == 0 ? "" : "it broke";
  r.flop = 2.0 * 64 * 64 * 64;
  r.source = "kiln tune";
  return r;
}

// An addition of `seconds` of building (and multiples of it for the other parts) to `run`'s row
// for a dense_pack.x86 task on "llvm": 4 trials, 1 error.
inline store::RunTimes make_run_times(const std::string& run, const std::string& workload,
                                      double seconds) {
  store::RunTimes t;
  t.run = run;
  t.target = "llvm";
  t.task_name = "dense_pack.x86";
  t.workload = workload;
  t.source = "kiln tune";
  t.started = 1700000000;
  t.updated = 1700000000 + seconds;
  t.trials = 4;
  t.errors = 1;
  t.build_s = seconds;
  t.run_s = 2 * seconds;
  t.cooldown_s = 0.5 * seconds;
  t.store_s = 0.1 * seconds;
  t.wall_s = 4 * seconds;
  return t;
}

}  // namespace kiln::testing
