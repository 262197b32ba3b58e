// Job files and submission for kiln serve end-to-end tests (serve_e2e_test.cc and the team
// store's, tests/postgres/team_serve_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "tests/run_kiln.h"

namespace kiln::testing {

// A small, fast job: one dense workload, one template, the random tuner, one timed run per
// config and no cooldown, so that a trial costs about a build.
inline std::string small_job(const std::string& workload, int trials, int priority = 0) {
  return "name: " + workload + "\nworkloads: [\"" + workload +
         "\"]\ntemplate: dense_nopack.x86\ntuner: random\nseed: 3\n"
         "budget: {trials: " +
         std::to_string(trials) + "}\npriority: " + std::to_string(priority) +
         "\nmeasure: {number: 1, repeat: 1, cooldown_interval: 0, timeout: 5, threads: 1, "
         "n_parallel: 1, build_timeout: 20}\n";
}

// kiln submit of `file` to the daemon at `address`; the job id it printed (0 on failure, which
// the test reports).
inline int64_t submit(const std::string& address, const std::string& file) {
  CommandResult r = run_kiln("submit --server " + address + " " + file);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return std::atoll(r.output.c_str());
}

}  // namespace kiln::testing
