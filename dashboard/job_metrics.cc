#include "dashboard/job_metrics.h"

#include "dashboard/prometheus_text.h"
#include "store/job_store.h"
#include "store/open_store.h"

namespace kiln::dashboard {

namespace {

constexpr int64_t kReadChunk = 5000;  // records per query while catching up

PrometheusLabels job_labels(const daemon::JobView& j) {
  return {{"job", std::to_string(j.row.id)}, {"name", j.row.name}};
}

}  // namespace

Result<std::unique_ptr<JobMetrics>> JobMetrics::open(const std::string& db) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> records,
                        store::open_store(db, /*read_only=*/true));
  return std::unique_ptr<JobMetrics>(new JobMetrics(std::move(records)));
}

Status JobMetrics::catch_up() {
  while (true) {
    store::RecordFilter filter;
    filter.after_id = last_id_;
    filter.limit = kReadChunk;
    KILN_ASSIGN_OR_RETURN(std::vector<store::Record> records, records_->records(filter));
    for (const store::Record& r : records) {
      last_id_ = std::max(last_id_, r.id);
      std::optional<int64_t> job = store::job_of_source(r.source);
      if (!job) continue;
      auto [it, added] = by_error_.try_emplace(*job);
      if (added) it->second.fill(0);
      int error = r.error_no >= 0 && r.error_no <= kMaxMeasureError
                      ? r.error_no
                      : static_cast<int>(MeasureError::kUnknownError);
      ++it->second[error];
    }
    if (static_cast<int64_t>(records.size()) < kReadChunk) return Status::Ok();
  }
}

Result<std::string> JobMetrics::render(const std::vector<daemon::JobView>& jobs,
                                       const daemon::MeasureGate::Load& gate) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_RETURN_IF_ERROR(catch_up());
  auto tally = [&](int64_t id) {
    std::array<int64_t, kMaxMeasureError + 1> none{};
    auto it = by_error_.find(id);
    return it == by_error_.end() ? none : it->second;
  };

  PrometheusText out;
  out.family("kiln_job_trials_total", "counter",
             "Trials (records) the job committed to the store.");
  for (const daemon::JobView& j : jobs) {
    int64_t total = 0;
    for (int64_t n : tally(j.row.id)) total += n;
    out.sample(job_labels(j), static_cast<double>(total));
  }
  out.family("kiln_job_errors_total", "counter",
             "Failed trials of the job by error kind (AutoTVM's MeasureErrorNo).");
  for (const daemon::JobView& j : jobs) {
    std::array<int64_t, kMaxMeasureError + 1> counts = tally(j.row.id);
    for (int e = 1; e <= kMaxMeasureError; ++e) {
      PrometheusLabels labels = job_labels(j);
      labels.push_back({"error", measure_error_name(static_cast<MeasureError>(e))});
      out.sample(labels, static_cast<double>(counts[e]));
    }
  }
  out.family("kiln_job_tuning_seconds_total", "counter",
             "Tuning time the job spent, over every run of it.");
  for (const daemon::JobView& j : jobs) out.sample(job_labels(j), j.row.seconds);
  out.family("kiln_job_estimated_latency_seconds", "gauge",
             "Estimated end-to-end latency of the job's model: sum of weight x best time per task "
             "(only once every task has a successful trial).");
  for (const daemon::JobView& j : jobs) {
    if (j.progress.latency_complete && j.progress.latency_s > 0) {
      out.sample(job_labels(j), j.progress.latency_s);
    }
  }
  out.family("kiln_jobs", "gauge", "Jobs per state; state=\"queued\" is the queue length.");
  for (store::JobState s :
       {store::JobState::kQueued, store::JobState::kRunning, store::JobState::kPaused,
        store::JobState::kDone, store::JobState::kFailed, store::JobState::kCancelled}) {
    int64_t n = 0;
    for (const daemon::JobView& j : jobs) n += j.row.state == s;
    out.sample({{"state", store::job_state_name(s)}}, static_cast<double>(n));
  }
  out.family("kiln_measure_gate_waiting", "gauge",
             "Running jobs waiting for their turn on the machine (the measure gate).");
  out.sample({}, static_cast<double>(gate.waiting));
  out.family("kiln_measure_gate_held", "gauge", "1 while a job holds the machine for a round.");
  out.sample({}, gate.held ? 1 : 0);
  farms_.append(jobs, out);
  return out.text();
}

}  // namespace kiln::dashboard
