#include "report/report_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "builder/target.h"
#include "exchange/target_description.h"
#include "jobs/job_plan.h"
#include "jobs/job_spec.h"
#include "store/job_store.h"
#include "store/open_store.h"
#include "tuner/model_tune.h"

namespace kiln::report {

namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // target, template, workload

Key key_of(const store::Record& r) { return {r.target, r.task_name, r.workload}; }

// The tasks a scope names (model or job), with their weights, before any record is read.
struct PlannedTasks {
  std::vector<tuner::ModelTask> tasks;
  std::string target;      // their target's string; "" when chosen from the records
  std::string model;       // the model's path, if a model's
  std::string source;      // a job's records' source, else ""
  std::string scope_text;  // the scope in words
};

Result<PlannedTasks> plan_of_job(const std::string& db_path, int64_t id) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<store::JobStore> jobs,
                        store::open_job_store(db_path, /*read_only=*/true));
  KILN_ASSIGN_OR_RETURN(bool exists, jobs->exists(id));
  if (!exists) {
    return InvalidArgument("record store '" + db_path + "': no job " + std::to_string(id) +
                           " (kiln jobs lists the daemon's jobs)");
  }
  KILN_ASSIGN_OR_RETURN(store::JobRow row, jobs->get(id));
  const std::string origin = "job " + std::to_string(id);
  PlannedTasks out;
  out.source = store::job_source(id);
  out.scope_text =
      "job " + std::to_string(id) + " (" + row.name + ", " + store::job_state_name(row.state) + ")";
  // A job whose spec cannot be planned now (its model file gone, say: the reason it failed) is
  // still reported, from its records alone.
  Result<daemon::JobSpec> spec = daemon::parse_job_spec(row.spec, origin, row.base_dir);
  Result<daemon::JobPlan> plan =
      spec.ok() ? daemon::plan_job(*spec, out.source) : Result<daemon::JobPlan>(spec.status());
  if (!plan.ok()) {
    out.scope_text +=
        "; its spec cannot be planned now (" + plan.status().message() + "): its records only";
    return out;
  }
  out.tasks = std::move(plan->tasks);
  out.target = plan->target.to_string();
  out.model = spec->model;
  return out;
}

Result<PlannedTasks> plan_of_model(const std::string& model) {
  if (!std::filesystem::exists(model))
    return InvalidArgument("model '" + model + "': no such file");
  Result<std::vector<tuner::ModelTask>> tasks =
      daemon::model_tasks(model, {}, {}, "ops", /*extra=*/true);
  if (!tasks.ok()) {
    return Status::Error(tasks.status().code(),
                         "model '" + model + "': " + tasks.status().message());
  }
  PlannedTasks out;
  out.tasks = std::move(*tasks);
  out.model = model;
  out.scope_text = "model " + model;
  return out;
}

// The target of the model's records: the one holding most records of its tasks, else the host's.
std::string model_target(const std::vector<tuner::ModelTask>& tasks,
                         const std::vector<store::Record>& records) {
  std::set<std::pair<std::string, std::string>> wanted;
  for (const tuner::ModelTask& t : tasks) {
    wanted.insert({std::string(t.task.tmpl->name()), t.task.workload.to_string()});
  }
  std::map<std::string, int64_t> per_target;
  for (const store::Record& r : records) {
    if (wanted.count({r.task_name, r.workload})) ++per_target[r.target];
  }
  std::string best;
  int64_t most = 0;
  for (const auto& [target, n] : per_target) {
    if (n > most) best = target, most = n;
  }
  return most > 0 ? best : builder::host_target().to_string();
}

// When each source began: its first record over every task in scope.
using Origins = std::map<std::string, double>;

// One source's records of a task (in id order) as trials with best-so-far throughput.
SourceTrials trials_of(const std::string& source, const std::vector<const store::Record*>& rs,
                       double first) {
  SourceTrials s;
  s.source = source;
  for (const store::Record* r : rs) {
    Trial t;
    t.number = static_cast<int64_t>(s.trials.size()) + 1;
    t.elapsed_s = r->timestamp - first;
    t.error_no = r->error_no;
    t.gflops = r->flops() / 1e9;
    if (r->error_no != 0) ++s.errors;
    if (r->error_no == 0 && store::is_comparable(*r))
      s.best_gflops = std::max(s.best_gflops, t.gflops);
    t.best_gflops = s.best_gflops;
    s.trials.push_back(t);
  }
  return s;
}

TaskData task_of(const Key& key, double weight, const std::vector<const store::Record*>& rs,
                 const std::string& primary_source, const Origins& origins) {
  TaskData task;
  std::tie(task.target, task.task_name, task.workload) = key;
  task.weight = weight;
  std::map<std::string, std::vector<const store::Record*>> by_source;
  for (const store::Record* r : rs) {
    by_source[r->source].push_back(r);
    if (r->error_no == 0 && store::is_comparable(*r) &&
        (!task.best || r->mean_cost() < task.best->mean_cost())) {
      task.best = *r;
    }
  }
  std::vector<std::string> order;  // by first record (rs is in id order)
  for (const store::Record* r : rs) {
    if (std::find(order.begin(), order.end(), r->source) == order.end()) order.push_back(r->source);
  }
  // The primary source first: the job's, else the one with most records (ties: the one recorded
  // first).
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    bool pa = a == primary_source, pb = b == primary_source;
    if (pa != pb) return pa;
    return by_source[a].size() > by_source[b].size();
  });
  for (const std::string& source : order)
    task.sources.push_back(trials_of(source, by_source[source], origins.at(source)));
  return task;
}

// The index of (tmpl, w)'s default config on `target`; nullopt for a target this kiln cannot
// parse (a record imported from another tool).
std::optional<int64_t> default_index(const ops::Template& tmpl, const ops::Workload& w,
                                     const std::string& target) {
  Result<Target> t = builder::parse_target(target);
  if (!t.ok()) return std::nullopt;
  return tmpl.default_config(w, tmpl.space(w), describe(*t).template_info()).index();
}

// Each workload's fallback template among the model's tasks (what a compile without records
// picks, compiler/layout_candidates.h): the first that is the untuned choice, else the first.
std::map<std::string, size_t> fallback_tasks(const std::vector<tuner::ModelTask>& tasks) {
  std::map<std::string, size_t> out;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::string w = tasks[i].task.workload.to_string();
    auto [it, fresh] = out.try_emplace(w, i);
    if (!fresh && !tasks[it->second].task.tmpl->untuned_choice() &&
        tasks[i].task.tmpl->untuned_choice()) {
      it->second = i;
    }
  }
  return out;
}

ModelData model_of(const PlannedTasks& plan, const std::vector<std::string>& keys_target,
                   const std::map<Key, std::vector<const store::Record*>>& by_task) {
  ModelData m;
  m.model = plan.model;
  // The live line's estimate, the same code: ModelTuneJob::estimated_latency.
  tuner::ModelTuneJob job(plan.tasks, builder::host_target(), {});
  std::vector<tuner::ModelTaskState> states(plan.tasks.size());
  // Every successful comparable record of the model's tasks, in time order.
  std::vector<std::pair<const store::Record*, size_t>> timeline;
  double last_record = -std::numeric_limits<double>::infinity();  // any record of the model's
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const tuner::ModelTask& t = plan.tasks[i];
    Key key{keys_target[i], std::string(t.task.tmpl->name()), t.task.workload.to_string()};
    ModelTaskShare share;
    share.label = key_label(std::get<1>(key), std::get<2>(key));
    share.weight = t.weight;
    share.best_s = std::numeric_limits<double>::infinity();
    share.default_s = std::numeric_limits<double>::infinity();
    const std::optional<int64_t> default_config =
        default_index(*t.task.tmpl, t.task.workload, keys_target[i]);
    auto it = by_task.find(key);
    if (it != by_task.end()) {
      share.trials = static_cast<int64_t>(it->second.size());
      for (const store::Record* r : it->second) {
        last_record = std::max(last_record, r->timestamp);
        if (r->error_no != 0 || !store::is_comparable(*r)) continue;
        timeline.emplace_back(r, i);
        share.best_s = std::min(share.best_s, r->mean_cost());
        if (r->config_index == default_config) {
          share.default_s = std::min(share.default_s, r->mean_cost());
        }
      }
    }
    m.tasks.push_back(share);
  }
  std::stable_sort(timeline.begin(), timeline.end(), [](const auto& a, const auto& b) {
    return a.first->timestamp < b.first->timestamp;
  });
  const double t0 = timeline.empty() ? 0 : timeline.front().first->timestamp;
  for (const auto& [r, i] : timeline) {
    if (!(r->mean_cost() < states[i].best_seconds)) continue;
    states[i].best_seconds = r->mean_cost();
    LatencyPoint p;
    p.elapsed_s = r->timestamp - t0;
    p.latency_s = job.estimated_latency(states, &p.complete);
    if (!m.latency.empty() && m.latency.back().elapsed_s == p.elapsed_s) m.latency.pop_back();
    m.latency.push_back(p);
  }
  m.latency_s = job.estimated_latency(states, &m.complete);
  // The estimate holds until the latest record, whatever it measured.
  if (!m.latency.empty() && last_record - t0 > m.latency.back().elapsed_s) {
    m.latency.push_back({last_record - t0, m.latency_s, m.complete});
  }
  // A task's share: its weight times its best, when it is its workload's best template.
  std::map<std::string, double> workload_best;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    auto [it, fresh] =
        workload_best.try_emplace(plan.tasks[i].task.workload.to_string(), m.tasks[i].best_s);
    it->second = std::min(it->second, m.tasks[i].best_s);
  }
  double untuned = 0;
  bool untuned_known = !plan.tasks.empty();
  for (const auto& [w, i] : fallback_tasks(plan.tasks)) {
    untuned += plan.tasks[i].weight * m.tasks[i].default_s;
    untuned_known = untuned_known && std::isfinite(m.tasks[i].default_s);
  }
  if (untuned_known) m.untuned_latency_s = untuned;
  std::set<std::string> counted;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const std::string w = plan.tasks[i].task.workload.to_string();
    if (!std::isfinite(m.tasks[i].best_s) || m.tasks[i].best_s != workload_best[w] ||
        m.latency_s <= 0 || !counted.insert(w).second) {
      continue;
    }
    m.tasks[i].share = m.tasks[i].weight * m.tasks[i].best_s / m.latency_s;
  }
  return m;
}

}  // namespace

std::string key_label(const std::string& task_name, const std::string& workload) {
  return task_name + " " + workload;
}

Result<ReportData> gather_report(const std::string& db_path, const Scope& scope,
                                 const std::vector<std::string>& bench_files) {
  ReportData data;
  data.db_path = db_path;
  if (scope.job && !scope.model_path.empty()) {
    return InvalidArgument("a report covers a job or a model, not both");
  }
  if (!std::filesystem::exists(db_path)) {
    return InvalidArgument("record store '" + db_path + "': no such file");
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                        store::open_store(db_path, /*read_only=*/true));
  // Bench files first: a malformed one fails before any long read.
  for (const std::string& file : bench_files) {
    KILN_ASSIGN_OR_RETURN(BenchResults results, read_bench_file(file));
    data.bench.push_back({file, std::move(results)});
  }

  std::optional<PlannedTasks> plan;
  if (scope.job) {
    KILN_ASSIGN_OR_RETURN(plan, plan_of_job(db_path, *scope.job));
  } else if (!scope.model_path.empty()) {
    KILN_ASSIGN_OR_RETURN(plan, plan_of_model(scope.model_path));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<store::Record> all, store->records());
  KILN_ASSIGN_OR_RETURN(std::vector<store::RunTimes> runs, store->run_times());

  std::map<Key, std::vector<const store::Record*>> by_task;
  for (const store::Record& r : all) by_task[key_of(r)].push_back(&r);

  std::vector<std::pair<Key, double>> tasks;  // in scope, in order, with weights
  std::set<Key> in_scope;
  std::string primary_source;
  if (plan && plan->tasks.empty()) {
    // A job known by its records only: its tasks in the order they were first measured.
    for (const store::Record& r : all) {
      if (r.source == plan->source && in_scope.insert(key_of(r)).second) {
        tasks.emplace_back(key_of(r), 0);
      }
    }
    primary_source = plan->source;
    data.scope = plan->scope_text;
  } else if (plan) {
    const std::string target = plan->target.empty() ? model_target(plan->tasks, all) : plan->target;
    std::vector<std::string> targets(plan->tasks.size(), target);
    for (const tuner::ModelTask& t : plan->tasks) {
      Key key{target, std::string(t.task.tmpl->name()), t.task.workload.to_string()};
      if (in_scope.insert(key).second) tasks.emplace_back(key, t.weight);
    }
    primary_source = plan->source;
    data.scope = plan->scope_text + ", target " + target;
    if (!plan->model.empty()) data.model = model_of(*plan, targets, by_task);
  } else {
    // In the order the tasks were first measured.
    for (const store::Record& r : all) {
      if (in_scope.insert(key_of(r)).second) tasks.emplace_back(key_of(r), 0);
    }
    data.scope = "every task in the store";
  }
  data.title = scope.job ? "kiln report: job " + std::to_string(*scope.job)
               : !scope.model_path.empty()
                   ? "kiln report: " + std::filesystem::path(scope.model_path).filename().string()
                   : "kiln report: " + std::filesystem::path(db_path).filename().string();

  static const std::vector<const store::Record*> kNone;
  auto records_of = [&](const Key& key) -> const std::vector<const store::Record*>& {
    auto it = by_task.find(key);
    return it == by_task.end() ? kNone : it->second;
  };
  Origins origins;
  for (const auto& [key, weight] : tasks) {
    for (const store::Record* r : records_of(key)) {
      auto [it, fresh] = origins.try_emplace(r->source, r->timestamp);
      it->second = std::min(it->second, r->timestamp);
    }
  }
  std::map<int, ErrorKind> errors;
  for (const auto& [key, weight] : tasks) {
    const std::vector<const store::Record*>& rs = records_of(key);
    data.tasks.push_back(task_of(key, weight, rs, primary_source, origins));
    for (const store::Record* r : rs) {
      // A job's report counts the job's records; other sources are only its comparisons.
      if (!primary_source.empty() && r->source != primary_source) continue;
      ++data.records;
      if (r->error_no == 0) continue;
      ErrorKind& e = errors[r->error_no];
      e.error_no = r->error_no;
      if (e.count++ == 0) e.example = r->error_msg;
    }
  }
  for (auto& [no, e] : errors) data.errors.push_back(std::move(e));
  for (store::RunTimes& r : runs) {
    if (!in_scope.count(Key{r.target, r.task_name, r.workload})) continue;
    if (!primary_source.empty() && r.source != primary_source) continue;
    data.runs.push_back(std::move(r));
  }
  return data;
}

}  // namespace kiln::report
