#include "store/store_copy.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

namespace kiln::store {

namespace {

constexpr size_t kCopyBatch = 512;

// Every field of a record but its id: equal keys are the same record.
std::string copy_key(const Record& r) {
  return nlohmann::json::array({r.target, r.task_name, r.workload, r.config_index, r.entities,
                                r.error_no, r.costs, r.all_cost, r.timestamp, r.error_msg, r.flop,
                                r.source, r.measure_options, r.runner_lost, r.measure_version})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A job's identity across stores.
std::tuple<std::string, std::string, double> job_key(const JobRow& j) {
  return {j.name, j.spec, j.submitted};
}

// `source` with its job id mapped through `ids`; other sources unchanged.
std::string renumbered(const std::string& source, const std::map<int64_t, int64_t>& ids) {
  std::optional<int64_t> job = job_of_source(source);
  if (!job) return source;
  auto it = ids.find(*job);
  return it == ids.end() ? source : job_source(it->second);
}

}  // namespace

Result<CopyReport> copy_store(Store& src, JobStore& src_jobs, Store& dst, JobStore& dst_jobs) {
  CopyReport report;

  // Jobs first: the records' sources name them.
  std::map<int64_t, int64_t> job_ids;  // source id -> destination id
  KILN_ASSIGN_OR_RETURN(std::vector<JobRow> theirs, dst_jobs.list());
  std::map<std::tuple<std::string, std::string, double>, int64_t> present;
  for (const JobRow& j : theirs) present.emplace(job_key(j), j.id);
  KILN_ASSIGN_OR_RETURN(std::vector<JobRow> ours, src_jobs.list());
  for (const JobRow& j : ours) {
    auto it = present.find(job_key(j));
    if (it != present.end()) {
      job_ids[j.id] = it->second;
      ++report.jobs_present;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(int64_t id,
                          dst_jobs.add(j.name, j.spec, j.base_dir, j.priority, j.submitted));
    if (j.seconds > 0) KILN_RETURN_IF_ERROR(dst_jobs.add_seconds(id, j.seconds, j.updated));
    JobState state = j.state == JobState::kRunning ? JobState::kQueued : j.state;
    KILN_RETURN_IF_ERROR(dst_jobs.set_state(id, state, j.reason, j.updated));
    job_ids[j.id] = id;
    present.emplace(job_key(j), id);
    ++report.jobs;
  }

  KILN_ASSIGN_OR_RETURN(std::vector<Record> existing, dst.records());
  std::set<std::string> have;
  for (const Record& r : existing) have.insert(copy_key(r));
  existing.clear();
  RecordFilter page;
  page.limit = static_cast<int64_t>(kCopyBatch);
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::vector<Record> rows, src.records(page));
    if (rows.empty()) break;
    page.after_id = rows.back().id;
    std::vector<Record> batch;
    for (Record& r : rows) {
      r.source = renumbered(r.source, job_ids);
      r.id = 0;
      if (!have.insert(copy_key(r)).second) {
        ++report.records_present;
        continue;
      }
      batch.push_back(std::move(r));
    }
    KILN_RETURN_IF_ERROR(dst.append(batch));
    report.records += static_cast<int64_t>(batch.size());
  }

  KILN_ASSIGN_OR_RETURN(std::vector<RunTimes> dst_times, dst.run_times());
  std::set<std::tuple<std::string, std::string, std::string, std::string>> rows_present;
  for (const RunTimes& t : dst_times) {
    rows_present.emplace(t.run, t.target, t.task_name, t.workload);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<RunTimes> src_times, src.run_times());
  for (RunTimes t : src_times) {
    if (!rows_present.emplace(t.run, t.target, t.task_name, t.workload).second) {
      ++report.run_times_present;
      continue;
    }
    t.source = renumbered(t.source, job_ids);
    KILN_RETURN_IF_ERROR(dst.add_run_times(t));
    ++report.run_times;
  }
  return report;
}

}  // namespace kiln::store
