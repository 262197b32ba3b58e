// From a job spec to what runs it: the tasks (a model's, extracted as `kiln tasks` does, or the
// workloads' templates), the target, and the options of the one orchestration object that tunes
// them (tuner::ModelTuneJob, which runs a TuneJob per round). `kiln tune MODEL` and `kiln serve`
// plan the same way, so a job behaves as the equivalent command line.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "frontend/onnx_import.h"
#include "jobs/job_spec.h"
#include "tuner/model_tune.h"

namespace kiln::daemon {

// The model's tuning tasks, weighted by occurrences, restricted to `ops` (conv2d includes
// depthwise_conv2d, as TVM's extract_from_program(ops=...)), followed by kiln's extra tasks (the
// Winograd convolution of 3x3 stride-1 layers) when `extra` is set; kInvalidArgument when none is
// left ("MODEL: no tunable task of <ops_name>").
Result<std::vector<tuner::ModelTask>> model_tasks(const std::string& model,
                                                  const frontend::ImportOptions& import,
                                                  const std::vector<std::string>& ops,
                                                  const std::string& ops_name, bool extra);

// Trials per round: 64 (Ansor's), capped by the per-task budget and by an even share of the
// total budget, so that a small budget still spreads over the tasks.
int round_trials(const tuner::ModelBudget& budget, size_t n_tasks);

struct JobPlan {
  std::vector<tuner::ModelTask> tasks;
  Target target;
  tuner::ModelTuneOptions options;  // budget.seconds is the whole budget (see remaining time)
};

// The job's tasks: its model's (model_tasks, under its input_shapes, ops and winograd) or its
// workloads' templates. Fails naming the field (model: or workloads:).
Result<std::vector<tuner::ModelTask>> job_tasks(const JobSpec& spec);

// Plans the job over `tasks` (job_tasks' result, which kiln serve computes in a child process:
// daemon/model_worker.h).
Result<JobPlan> plan_job(const JobSpec& spec, std::vector<tuner::ModelTask> tasks,
                         const std::string& source);

// Plans the job. Fails (naming the job's field) when the model cannot be read or has no task.
// `source` is written on every record (store::job_source) and owns the job's config claims
// (leases), so that a restarted daemon takes up the claims of the run it replaces.
Result<JobPlan> plan_job(const JobSpec& spec, const std::string& source);

}  // namespace kiln::daemon
