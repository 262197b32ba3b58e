#include "cli/records_estimate.h"

#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "builder/target.h"
#include "cli/common.h"
#include "jobs/job_plan.h"
#include "store/open_store.h"
#include "tuner/model_tune.h"

namespace kiln::cli {

RecordsEstimate records_estimate(const std::string& db_path, const std::string& onnx,
                                 const std::string& target_text) {
  std::vector<tuner::ModelTask> tasks =
      value_or_exit(daemon::model_tasks(onnx, {}, {}, "--ops", /*extra=*/true));
  Target target = value_or_exit(builder::parse_target(target_text));
  std::unique_ptr<store::Store> db = value_or_exit(store::open_store(db_path, /*read_only=*/true));
  std::vector<tuner::ModelTaskState> states(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    std::optional<store::Record> best =
        value_or_exit(db->best(target.to_string(), std::string(tasks[i].task.tmpl->name()),
                               tasks[i].task.workload.to_string()));
    if (best) states[i].best_seconds = best->mean_cost();
  }
  tuner::ModelTuneJob job(std::move(tasks), target, {});
  RecordsEstimate estimate;
  std::tie(estimate.measured, estimate.workloads) = job.measured_workloads(states);
  bool complete = false;
  estimate.seconds = job.estimated_latency(states, &complete);
  return estimate;
}

}  // namespace kiln::cli
