#include "jobs/job_plan.h"

#include <algorithm>

#include "builder/target.h"
#include "frontend/task_extraction.h"
#include "ops/registry.h"
#include "tuner/measure_options.h"

namespace kiln::daemon {

namespace {

bool op_selected(const std::vector<std::string>& ops, const std::string& op) {
  if (ops.empty()) return true;
  for (const std::string& o : ops) {
    if (ops::operator_selects(o, op)) return true;
  }
  return false;
}

Result<std::vector<tuner::ModelTask>> workload_tasks(const JobSpec& spec) {
  std::vector<tuner::ModelTask> tasks;
  for (const std::string& text : spec.workloads) {
    KILN_ASSIGN_OR_RETURN(ops::Workload w, ops::Workload::parse(text));
    KILN_ASSIGN_OR_RETURN(std::vector<const ops::Template*> templates,
                          ops::resolve_templates(w, spec.template_name));
    for (const ops::Template* t : templates) {
      KILN_ASSIGN_OR_RETURN(ops::Workload normalized, t->normalize(w));
      tasks.push_back({{t, normalized}, 1.0});
    }
  }
  return tasks;
}

}  // namespace

Result<std::vector<tuner::ModelTask>> model_tasks(const std::string& model,
                                                  const frontend::ImportOptions& import,
                                                  const std::vector<std::string>& ops,
                                                  const std::string& ops_name, bool extra) {
  KILN_ASSIGN_OR_RETURN(frontend::Graph graph, frontend::import_onnx(model, import));
  frontend::TaskExtraction extraction = frontend::extract_tasks(graph);
  std::vector<frontend::ModelTask> extra_tasks;
  if (extra) extra_tasks = frontend::extra_tasks(extraction.tasks);
  std::vector<tuner::ModelTask> tasks;
  for (const auto* list : {&extraction.tasks, &extra_tasks}) {
    for (const frontend::ModelTask& t : *list) {
      if (!op_selected(ops, t.workload.op)) continue;
      tasks.push_back({{t.tmpl, t.workload}, static_cast<double>(t.count)});
    }
  }
  if (tasks.empty()) {
    return InvalidArgument(model + ": no tunable task" + (ops.empty() ? "" : " of " + ops_name));
  }
  return tasks;
}

int round_trials(const tuner::ModelBudget& budget, size_t n_tasks) {
  int64_t round = 64;
  if (budget.total_trials) {
    round = std::min<int64_t>(
        round, std::max<int64_t>(1, *budget.total_trials / static_cast<int64_t>(n_tasks)));
  }
  if (budget.trials_per_task) round = std::min(round, *budget.trials_per_task);
  return static_cast<int>(round);
}

Result<std::vector<tuner::ModelTask>> job_tasks(const JobSpec& spec) {
  if (!spec.model.empty()) {
    frontend::ImportOptions import;
    for (const auto& [name, dims] : spec.input_shapes) {
      KILN_ASSIGN_OR_RETURN(auto parsed, frontend::parse_input_shape(name + "=" + dims));
      import.input_shapes.emplace(parsed.first, parsed.second);
    }
    Result<std::vector<tuner::ModelTask>> tasks =
        model_tasks(spec.model, import, spec.ops, "ops", spec.winograd);
    if (!tasks.ok()) return InvalidArgument("model: " + tasks.status().message());
    return tasks;
  }
  Result<std::vector<tuner::ModelTask>> tasks = workload_tasks(spec);
  if (!tasks.ok()) return InvalidArgument("workloads: " + tasks.status().message());
  return tasks;
}

Result<JobPlan> plan_job(const JobSpec& spec, const std::string& source) {
  KILN_ASSIGN_OR_RETURN(std::vector<tuner::ModelTask> tasks, job_tasks(spec));
  return plan_job(spec, std::move(tasks), source);
}

Result<JobPlan> plan_job(const JobSpec& spec, std::vector<tuner::ModelTask> tasks,
                         const std::string& source) {
  KILN_ASSIGN_OR_RETURN(Target target, builder::parse_target(spec.target));
  JobPlan plan{std::move(tasks), target, {}};
  tuner::ModelTuneOptions& o = plan.options;
  o.job.tuner = spec.tuner;
  o.job.tuner_settings = spec.tuner_settings;
  o.job.seed = spec.seed;
  o.job.transfer = spec.transfer;
  o.job.loop.early_stopping = spec.early_stopping;
  o.job.loop.measure_options = tuner::measure_options_text(spec.measure, spec.build_timeout_s);
  o.job.loop.source = source;
  // The job's claims are its own across restarts: a daemon killed with configs claimed resumes
  // the job under the same owner and takes them up again, instead of waiting for them to expire.
  o.job.loop.lease_owner = source;
  o.scheduler.strategy = spec.scheduler == "round-robin" ? tuner::SchedulerStrategy::kRoundRobin
                                                         : tuner::SchedulerStrategy::kGradient;
  o.budget.total_trials = spec.budget.trials;
  o.budget.trials_per_task = spec.budget.trials_per_task;
  o.budget.seconds = spec.budget.seconds;
  if (!spec.budget.trials && !spec.budget.trials_per_task && !spec.budget.seconds) {
    o.budget.trials_per_task = 1000;  // kiln tune's default --trials, per task
  }
  o.round_trials = round_trials(o.budget, plan.tasks.size());
  return plan;
}

}  // namespace kiln::daemon
