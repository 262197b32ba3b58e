// A daemon job as the dashboard sees it (daemon::JobView), for the dashboard's unit tests.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/job_manager.h"

namespace kiln::testing {

inline daemon::JobView job_view(int64_t id, const std::string& name, store::JobState state,
                                double seconds) {
  daemon::JobView v;
  v.row.id = id;
  v.row.name = name;
  v.row.state = state;
  v.row.seconds = seconds;
  return v;
}

}  // namespace kiln::testing
