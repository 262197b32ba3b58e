// The daemon's /metrics (Prometheus text, dashboard/prometheus_text.h), per job {job,name}:
//   kiln_job_trials_total               counter  records the job committed
//   kiln_job_errors_total{error}        counter  its failed records by MeasureErrorNo name
//                                                (common/measure_error.h)
//   kiln_job_tuning_seconds_total       counter  tuning time spent, over every run
//   kiln_job_estimated_latency_seconds  gauge    sum of weight x best (once every task has one)
// and for the daemon:
//   kiln_jobs{state}                    gauge    jobs per state (queued: the queue length)
//   kiln_measure_gate_waiting           gauge    running jobs waiting for their turn
//   kiln_measure_gate_held              gauge    1 while a job holds the machine
//   kiln_farm_*                                  runner states of the running jobs' farms
//                                                (dashboard/farm_metrics.h)
// Trials and errors are tallied from the store's records (append-only), read incrementally on
// a read-only connection of its own: a scrape reads only what was committed since the last one
// and never blocks the jobs writing.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/measure_error.h"
#include "common/status.h"
#include "daemon/job_manager.h"
#include "dashboard/farm_metrics.h"
#include "store/store.h"

namespace kiln::dashboard {

class JobMetrics {
 public:
  // Opens the store at `db` read-only.
  static Result<std::unique_ptr<JobMetrics>> open(const std::string& db);

  // The exposition text for `jobs` (JobManager::list) and the gate's load. Thread-safe.
  Result<std::string> render(const std::vector<daemon::JobView>& jobs,
                             const daemon::MeasureGate::Load& gate);

 private:
  explicit JobMetrics(std::unique_ptr<store::Store> records) : records_(std::move(records)) {}
  // Tallies the records committed since the last call. REQUIRES mu_ held.
  Status catch_up();

  std::mutex mu_;
  std::unique_ptr<store::Store> records_;
  int64_t last_id_ = 0;
  // Per job: its records by error_no (0: successful).
  std::map<int64_t, std::array<int64_t, kMaxMeasureError + 1>> by_error_;
  FarmMetrics farms_;
};

}  // namespace kiln::dashboard
