// The runner states of the farms the daemon's running jobs measure on (run_on.tracker), for
// /metrics, as their trackers report them (the Tracker service's Status call, a 2 s deadline):
//   kiln_farm_up{tracker}                     gauge  1 when the tracker answered, else 0
//   kiln_farm_runners{tracker,key,state}      gauge  runners free / busy / quarantined
//   kiln_farm_lease_queue{tracker,key}        gauge  lease requests waiting for a runner
// One call per distinct tracker and credentials per scrape; the channels are kept.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/job_manager.h"
#include "dashboard/prometheus_text.h"
#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"

namespace kiln::dashboard {

class FarmMetrics {
 public:
  // Appends the three families for the running jobs of `jobs` that use a farm (nothing but the
  // family headers when none does). Thread-safe.
  void append(const std::vector<daemon::JobView>& jobs, PrometheusText& out);

 private:
  struct Farm {
    std::string tracker;
    farm::ClientAuth auth;
  };
  // The tracker's Status, or nullptr when it cannot be reached or the credentials are wrong.
  std::unique_ptr<v1::FarmStatus> status_of(const Farm& farm);

  std::mutex mu_;
  std::map<std::string, std::unique_ptr<v1::Tracker::Stub>> stubs_;  // by tracker + credentials
};

}  // namespace kiln::dashboard
