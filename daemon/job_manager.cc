#include "daemon/job_manager.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>

#include "builder/build_pool.h"
#include "common/safe_file.h"
#include "daemon/export_paths.h"
#include "daemon/farm_watch.h"
#include "daemon/model_worker.h"
#include "farm/signing.h"
#include "jobs/job_plan.h"
#include "runner/local_runner.h"
#include "runner/remote_runner.h"
#include "store/formats/tvm_log.h"
#include "store/open_store.h"
#include "tuner/measure_options.h"

namespace kiln::daemon {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string job_name(int64_t id) { return "job " + std::to_string(id); }

// The farm's runners, leased at the job's priority (the tracker queues requests by priority).
Result<std::unique_ptr<runner::Runner>> make_remote_runner(const JobSpec& spec, int64_t id) {
  runner::RemoteRunnerOptions r;
  r.priority = static_cast<int>(spec.priority);
  r.client = store::job_source(id);
  r.tracker = spec.run_on.tracker;
  r.key = spec.run_on.key;
  r.auth.certs_dir = spec.run_on.certs_dir;
  r.auth.token_file = spec.run_on.token_file;
  r.auth.insecure = spec.run_on.insecure;
  r.measure = spec.measure;
  r.wait_s = spec.run_on.runner_wait_s;
  std::string key_file = spec.run_on.signing_key_file;
  if (key_file.empty()) key_file = spec.run_on.token_file;
  if (key_file.empty()) key_file = farm::cert_files(spec.run_on.certs_dir).token;
  KILN_ASSIGN_OR_RETURN(r.signing_key, farm::read_signing_key(key_file));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<runner::RemoteRunner> runner,
                        runner::RemoteRunner::create(std::move(r)));
  return std::unique_ptr<runner::Runner>(std::move(runner));
}

}  // namespace

JobManager::JobManager(JobManagerOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<JobManager>> JobManager::open(JobManagerOptions options) {
  if (options.max_jobs < 1) return InvalidArgument("at least one job must be able to run");
  std::unique_ptr<JobManager> m(new JobManager(std::move(options)));
  // One daemon per store: two would run the same jobs under the same claims and measure configs
  // twice. The lock is on the store file itself (flock, which SQLite's POSIX locks ignore), so a
  // second daemon is refused whatever path reaches the file: a symlink, a hard link, "./".
  // The kernel drops the lock with the process, however it ends.
  const std::string& db = m->options_.db;
  if (m->options_.job_lease_s <= 0) return InvalidArgument("the job lease must be positive");
  if (store::is_postgres_location(db)) {
    // A team's store: every daemon on it shares the queue; jobs are owned through leases.
    m->shared_store_ = true;
    KILN_ASSIGN_OR_RETURN(m->jobs_, store::open_job_store(db));
    KILN_ASSIGN_OR_RETURN(m->records_, store::open_store(db));
    m->log("daemon " + store::owner_host(m->owner_) +
           " on a shared store: jobs left running by a " +
           "daemon that stopped are taken over when their leases expire");
    return m;
  }
  m->lock_fd_ = ::open(db.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (m->lock_fd_ < 0)
    return IoError(db + ": cannot open the record store: " + std::strerror(errno));
  if (flock(m->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return InvalidArgument("record store '" + db +
                             "' is served by another kiln serve already (the file is locked; " +
                             "through another path, a link, perhaps)");
    }
    return IoError(db + ": cannot lock: " + std::strerror(errno));
  }
  KILN_ASSIGN_OR_RETURN(m->jobs_, store::open_job_store(m->options_.db));
  KILN_ASSIGN_OR_RETURN(m->records_, store::open_store(m->options_.db));
  KILN_ASSIGN_OR_RETURN(int64_t requeued, m->jobs_->requeue_running(now_s()));
  if (requeued > 0) {
    m->log(std::to_string(requeued) + " job(s) left running by the previous daemon queued again");
  }
  return m;
}

JobManager::~JobManager() {
  drain();
  // Closing a descriptor of the store drops every POSIX lock this process holds on it, SQLite's
  // included: the connections go first.
  jobs_.reset();
  records_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void JobManager::log(const std::string& line) {
  if (options_.log) options_.log(line);
}

void JobManager::changed() {
  ++changes_;
  cv_.notify_all();
}

void JobManager::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (scheduler_.joinable() || draining_) return;
  scheduler_ = std::thread([this] { schedule_loop(); });
}

void JobManager::schedule_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!draining_) {
    schedule_once(lock);
    cv_.wait_for(lock, std::chrono::seconds(1));
  }
}

void JobManager::reap_finished() {
  for (auto it = running_.begin(); it != running_.end();) {
    if (it->second->finished) {
      it->second->thread.join();
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
}

void JobManager::write_pending_ends() {
  std::map<int64_t, PendingEnd> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending = pending_;
  }
  for (const auto& [id, end] : pending) {
    Result<bool> written = jobs_->release_job(id, owner_, end.state, end.reason, now_s());
    if (!written.ok()) return;  // the store is still unreachable: the next round tries again
    log(job_name(id) + (*written ? ": " + std::string(store::job_state_name(end.state)) +
                                       " (written now that the store is back)"
                                 : ": taken over by another daemon before its end here could "
                                   "be written; that one resumes it"));
    std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(id);
    changed();
  }
}

void JobManager::renew_leases(std::unique_lock<std::mutex>& lock) {
  const double now = now_s();
  if (now - last_renew_ < options_.job_lease_s / 4) return;
  std::vector<int64_t> ids;
  for (const auto& [id, r] : running_) {
    if (!r->finished) ids.push_back(id);
  }
  if (ids.empty()) {
    last_renew_ = now;
    return;
  }
  lock.unlock();
  Result<std::vector<store::OwnedJob>> owned =
      jobs_->renew_jobs(owner_, ids, options_.job_lease_s, now);
  lock.lock();
  if (!owned.ok()) {
    log("cannot renew the leases of this daemon's jobs: " + owned.status().message());
    return;
  }
  last_renew_ = now;
  std::set<int64_t> kept;
  for (const store::OwnedJob& o : *owned) kept.insert(o.id);
  for (int64_t id : ids) {
    auto it = running_.find(id);
    if (kept.count(id) || it == running_.end() || it->second->finished) continue;
    // Its lease expired (this daemon could not renew it in time) and another daemon claimed it:
    // that one runs it now. Stop here, after the batch in flight (its configs stay claimed).
    it->second->reason = StopReason::kLost;
    it->second->stop.request_stop();
    log(job_name(id) + ": taken over by another daemon (this one's lease had expired); stopping");
  }
}

void JobManager::schedule_once(std::unique_lock<std::mutex>& lock) {
  reap_finished();
  lock.unlock();
  write_pending_ends();
  Result<std::vector<store::JobRow>> rows = jobs_->list();
  lock.lock();
  if (draining_) return;
  if (!rows.ok()) {
    if (rows.status().message() != last_store_error_) {
      log("cannot read the jobs: " + rows.status().message());
      last_store_error_ = rows.status().message();
    }
    return;
  }
  last_store_error_.clear();
  // Watchers of a job another daemon runs see its changes through the store.
  size_t signature = 0;
  for (const store::JobRow& row : *rows) {
    signature = signature * 1000003 ^
                std::hash<std::string>{}(std::to_string(row.id) + job_state_name(row.state) +
                                         std::to_string(row.updated) + row.owner +
                                         store::job_request_name(row.request));
  }
  if (signature != jobs_signature_) {
    jobs_signature_ = signature;
    changed();
  }
  renew_leases(lock);
  if (draining_) return;

  const double now = now_s();
  std::vector<const store::JobRow*> candidates;  // to start: claimable, or ours
  std::vector<const store::JobRow*> waiting;     // claimable, and waiting long enough to preempt
  std::vector<const store::JobRow*> victims;     // running, the team's (the lowest first)
  for (const store::JobRow& row : *rows) {
    auto it = running_.find(row.id);
    const bool active = it != running_.end();
    if (active && row.request != store::JobRequest::kNone &&
        it->second->reason == StopReason::kNone) {
      // Asked through another daemon.
      it->second->reason =
          row.request == store::JobRequest::kPause ? StopReason::kPause : StopReason::kCancel;
      it->second->stop.request_stop();
    }
    const bool claimable =
        !active && !pending_.count(row.id) &&
        (row.state == store::JobState::kQueued || (row.state == store::JobState::kRunning &&
                                                   row.owner != owner_ && row.lease_expires < now));
    if (active || claimable) candidates.push_back(&row);
    // On a shared store a daemon with a free slot takes a new job first: a job preempts only
    // once it has waited.
    if (claimable && (!shared_store_ || now - row.updated >= kTeamPreemptGraceS)) {
      waiting.push_back(&row);
    }
    if (active || (row.state == store::JobState::kRunning && !claimable && row.owner != owner_)) {
      victims.push_back(&row);
    }
  }
  auto first_served = [](const auto* a, const auto* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->id < b->id;
  };
  std::sort(candidates.begin(), candidates.end(), first_served);
  std::sort(waiting.begin(), waiting.end(), first_served);
  std::sort(victims.begin(), victims.end(),
            [&](const auto* a, const auto* b) { return first_served(b, a); });
  const size_t slots = static_cast<size_t>(options_.max_jobs);
  // Preemption: the k-th waiting job (the highest first) displaces the k-th running job of the
  // team (the lowest first) when its priority is higher. Every daemon computes the same pairs
  // from the same rows, so one job is preempted per waiting job, by the daemon that runs it. A
  // daemon alone on its store first gives the waiting jobs its free slots.
  const size_t free_slots = shared_store_ ? 0 : slots - std::min(slots, running_.size());
  for (size_t k = 0; k + free_slots < waiting.size() && k < victims.size(); ++k) {
    const store::JobRow& victim = *victims[k];
    if (waiting[k + free_slots]->priority <= victim.priority) break;
    auto it = running_.find(victim.id);
    if (it != running_.end() && it->second->reason == StopReason::kNone) {
      it->second->reason = StopReason::kPreempt;
      it->second->stop.request_stop();
      log(job_name(victim.id) + ": preempted by a job of higher priority");
    }
  }
  for (size_t i = 0; i < candidates.size() && i < slots; ++i) {
    if (draining_ || running_.size() >= slots) break;
    if (running_.count(candidates[i]->id)) continue;
    claim_and_start(lock, *candidates[i]);
  }
}

void JobManager::claim_and_start(std::unique_lock<std::mutex>& lock, const store::JobRow& row) {
  lock.unlock();
  Result<bool> claimed = jobs_->claim_job(row.id, owner_, options_.job_lease_s, now_s());
  // A request made of a dead owner (pause, cancel) is carried out rather than run.
  Result<bool> ended = false;
  if (claimed.ok() && *claimed && row.request != store::JobRequest::kNone) {
    const bool pause = row.request == store::JobRequest::kPause;
    ended = jobs_->release_job(row.id, owner_,
                               pause ? store::JobState::kPaused : store::JobState::kCancelled,
                               pause ? "paused on request" : "cancelled on request", now_s());
  }
  lock.lock();
  if (!claimed.ok()) {
    log(job_name(row.id) + ": cannot start: " + claimed.status().message());
    return;
  }
  if (!*claimed) return;  // another daemon was first
  if (!ended.ok() || *ended) {
    log(job_name(row.id) + (ended.ok() ? ": " + std::string(store::job_request_name(row.request)) +
                                             " request of its previous daemon carried out"
                                       : ": cannot end it: " + ended.status().message()));
    changed();
    return;
  }
  if (draining_) {
    lock.unlock();
    Result<bool> released = jobs_->release_job(row.id, owner_, store::JobState::kQueued,
                                               "the daemon stopped; resumes on restart", now_s());
    (void)released;  // if not, its lease expires and another daemon (or the next) takes it
    lock.lock();
    return;
  }
  auto r = std::make_unique<Running>();
  r->priority = row.priority;
  Running* raw = r.get();
  running_[row.id] = std::move(r);
  raw->thread = std::thread([this, id = row.id] { run_job(id); });
  const bool taken_over = row.state == store::JobState::kRunning && !row.owner.empty();
  log(job_name(row.id) + ": started" +
      (shared_store_ ? " on " + store::owner_host(owner_) : std::string()) +
      (taken_over ? " (taken over from " + store::owner_host(row.owner) + ", whose lease expired)"
                  : std::string()));
  changed();
}

void JobManager::run_job(int64_t id) {
  Running* running = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running = running_.at(id).get();
  }
  std::string summary;
  Result<bool> finished = run_job_body(id, *running, &summary);
  store::JobState state = store::JobState::kDone;
  std::string reason = summary;
  StopReason stopped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped = running->reason;
  }
  if (!finished.ok()) {
    state = store::JobState::kFailed;
    reason = finished.status().message();
  } else if (!*finished) {
    switch (stopped) {
      case StopReason::kCancel:
        state = store::JobState::kCancelled;
        reason = "cancelled on request";
        break;
      case StopReason::kPause:
        state = store::JobState::kPaused;
        reason = "paused on request";
        break;
      default:
        state = store::JobState::kQueued;
        reason = stopped == StopReason::kDrain ? "the daemon stopped; resumes on restart"
                                               : "preempted by a job of higher priority";
    }
  }
  if (stopped == StopReason::kLost) {
    log(job_name(id) + ": stopped here; another daemon runs it");
  } else {
    // Outside mu_: a store that is down takes its reconnection window to say so.
    Result<bool> written = jobs_->release_job(id, owner_, state, reason, now_s());
    log(job_name(id) + ": " + store::job_state_name(state) + (reason.empty() ? "" : ": " + reason));
    std::lock_guard<std::mutex> lock(mu_);
    if (!written.ok()) {
      pending_[id] = {state, reason};
      log(job_name(id) + ": cannot record its state (" + written.status().message() +
          "); written when the store is back");
    } else if (!*written) {
      log(job_name(id) + ": another daemon took it over (this one's lease had expired); " +
          "its end here is not recorded");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  running->finished = true;
  changed();
}

Result<bool> JobManager::run_job_body(int64_t id, Running& running, std::string* summary) {
  KILN_ASSIGN_OR_RETURN(store::JobRow row, jobs_->get(id));
  KILN_ASSIGN_OR_RETURN(JobSpec spec, parse_job_spec(row.spec, job_name(id), row.base_dir));
  // A model is imported in a child process: one that crashes the import fails this job alone.
  Result<std::vector<tuner::ModelTask>> tasks =
      spec.model.empty() ? job_tasks(spec)
                         : job_tasks_in_child(options_.worker_binary, row.spec, row.base_dir);
  if (!tasks.ok()) return tasks.status();
  Result<JobPlan> planned = plan_job(spec, std::move(*tasks), store::job_source(id));
  if (!planned.ok()) return planned.status();
  JobPlan& plan = *planned;
  if (plan.options.budget.seconds) {
    double left = *plan.options.budget.seconds - row.seconds;
    if (left <= 0) {
      *summary = "time budget spent";
      KILN_RETURN_IF_ERROR(write_exports(id, row, spec));
      return true;
    }
    plan.options.budget.seconds = left;
  }

  builder::BuildPoolOptions build_options;
  build_options.n_parallel = spec.n_parallel;
  build_options.timeout_s = spec.build_timeout_s;
  builder::LocalBuildPool builder(build_options);
  if (!options_.worker_binary.empty()) builder.exec_workers(options_.worker_binary);
  std::unique_ptr<runner::Runner> runner;
  if (spec.run_on.tracker.empty()) {
    runner::RunnerOptions local = spec.measure;
    local.worker_binary = options_.worker_binary;
    runner = std::make_unique<runner::LocalRunner>(local);
  } else {
    KILN_ASSIGN_OR_RETURN(runner, make_remote_runner(spec, id));
  }
  // A farm job whose runners are gone stops after that batch and fails (below), alone.
  std::unique_ptr<FarmWatch> farm;
  if (!spec.run_on.tracker.empty()) {
    farm = std::make_unique<FarmWatch>(*runner,
                                       [&](const std::string&) { running.stop.request_stop(); });
  }
  runner::Runner& measuring = farm ? *farm : *runner;
  plan.options.job.loop.lease_s =
      tuner::lease_seconds(spec.measure, spec.build_timeout_s, builder.n_parallel());

  tuner::ModelTuneJob job(plan.tasks, plan.target, plan.options);
  {
    std::lock_guard<std::mutex> lock(mu_);
    JobProgress& p = progress_[id];
    p = JobProgress{};
    for (const tuner::ModelTask& t : job.tasks()) {
      p.tasks.push_back({std::string(t.task.tmpl->name()), t.task.workload.to_string(), t.weight});
    }
    changed();
  }
  double counted_s = 0;  // of this run, already added to the job's seconds
  auto count_time = [&](double elapsed_s) -> Status {
    double delta = elapsed_s - counted_s;
    counted_s = elapsed_s;
    return jobs_->add_seconds(id, std::max(0.0, delta), now_s());
  };
  Status time_status = Status::Ok();
  tuner::ModelTuneEvents events;
  // A round at a time on the machine (daemon/measure_gate.h): a farm job builds locally too.
  const std::stop_token stop = running.stop.get_token();
  events.before_round = [&] { return gate_.acquire(row.priority, stop); };
  events.after_round = [&] { gate_.release(); };
  events.progress = [&](const tuner::ModelTuneStatus& st) {
    Status s = count_time(st.elapsed_s);
    if (!s.ok() && time_status.ok()) time_status = s;
    std::lock_guard<std::mutex> lock(mu_);
    JobProgress& p = progress_[id];
    p.current_task = st.current;
    p.trials = st.trials;
    p.latency_s = st.latency_s;
    p.latency_complete = st.latency_complete;
    for (size_t i = 0; i < st.tasks->size() && i < p.tasks.size(); ++i) {
      const tuner::ModelTaskState& t = (*st.tasks)[i];
      p.tasks[i].trials = t.trials;
      p.tasks[i].best_seconds = std::isfinite(t.best_seconds) ? t.best_seconds : 0;
      p.tasks[i].best_gflops = t.best_flops / 1e9;
    }
    changed();
  };
  KILN_ASSIGN_OR_RETURN(tuner::ModelTuneResult result,
                        job.run(builder, measuring, *records_, events, stop));
  KILN_RETURN_IF_ERROR(count_time(result.status.elapsed_s));
  KILN_RETURN_IF_ERROR(time_status);
  if (farm && !farm->reason().empty()) return RuntimeError("run_on: " + farm->reason());
  if (result.interrupted) return false;
  char text[160];
  std::snprintf(text, sizeof text, "%lld trials%s%s", static_cast<long long>(result.status.trials),
                result.out_of_time ? ", time budget spent" : "",
                result.status.latency_s > 0 ? "" : ", no config succeeded");
  *summary = text;
  if (result.status.latency_s > 0) {
    std::snprintf(text, sizeof text, "; estimated latency %s%.4f ms",
                  result.status.latency_complete ? "" : ">= ", result.status.latency_s * 1e3);
    *summary += text;
  }
  KILN_RETURN_IF_ERROR(write_exports(id, row, spec));
  return true;
}

Status JobManager::check_exports(const JobSpec& spec) {
  ExportPolicy policy{options_.db, options_.export_dirs};
  if (!spec.export_to.tvm_log.empty()) {
    KILN_RETURN_IF_ERROR(check_export_path("export.tvm_log", spec.export_to.tvm_log, policy));
  }
  if (!spec.export_to.compiled_model.empty()) {
    KILN_RETURN_IF_ERROR(
        check_export_path("export.compiled_model", spec.export_to.compiled_model, policy));
  }
  return Status::Ok();
}

Status JobManager::write_exports(int64_t id, const store::JobRow& row, const JobSpec& spec) {
  // Again at write time: what is at the paths now may not be what was there at submit.
  KILN_RETURN_IF_ERROR(check_exports(spec));
  if (!spec.export_to.tvm_log.empty()) {
    Result<std::string> log = export_tvm_log(id);
    if (!log.ok()) return InvalidArgument("export.tvm_log: " + log.status().message());
    Status s = write_file_atomically(spec.export_to.tvm_log, *log);
    if (!s.ok()) return InvalidArgument("export.tvm_log: " + s.message());
    const auto lines = std::count(log->begin(), log->end(), '\n');
    this->log(job_name(id) + ": exported its TVM log (" + std::to_string(lines) + " records) to " +
              spec.export_to.tvm_log);
  }
  if (!spec.export_to.compiled_model.empty()) {
    Status s =
        export_compiled_model_in_child(options_.worker_binary, row.spec, row.base_dir, options_.db);
    if (!s.ok()) return InvalidArgument("export.compiled_model: " + s.message());
    log(job_name(id) + ": exported its compiled model to " + spec.export_to.compiled_model);
  }
  return Status::Ok();
}

Result<int64_t> JobManager::submit(const std::string& spec_yaml, const std::string& base_dir) {
  KILN_ASSIGN_OR_RETURN(JobSpec spec, parse_job_spec(spec_yaml, "job", base_dir));
  KILN_RETURN_IF_ERROR(check_exports(spec));
  if (!spec.model.empty()) {
    // Imported now, in a child: a model that is not ONNX (or that crashes the import) is refused
    // here, not when the job starts.
    Result<std::vector<tuner::ModelTask>> tasks =
        job_tasks_in_child(options_.worker_binary, spec_yaml, base_dir);
    if (!tasks.ok())
      return Status::Error(tasks.status().code(), "job: " + tasks.status().message());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_) return InvalidArgument("the daemon is stopping; submit again when it is back");
  }
  KILN_ASSIGN_OR_RETURN(int64_t id,
                        jobs_->add(spec.name, spec_yaml, base_dir, spec.priority, now_s()));
  log(job_name(id) + ": submitted" + (spec.name.empty() ? "" : " (" + spec.name + ")"));
  std::lock_guard<std::mutex> lock(mu_);
  changed();
  return id;
}

Result<JobView> JobManager::get(int64_t id) {
  JobView v;
  KILN_ASSIGN_OR_RETURN(v.row, jobs_->get(id));
  KILN_ASSIGN_OR_RETURN(v.records, jobs_->count_records(id));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = progress_.find(id);
  if (it != progress_.end()) v.progress = it->second;
  v.version = changes_;
  return v;
}

Result<std::vector<JobView>> JobManager::list() {
  KILN_ASSIGN_OR_RETURN(std::vector<store::JobRow> rows, jobs_->list());
  std::vector<JobView> out;
  for (store::JobRow& row : rows) {
    JobView v;
    v.row = std::move(row);
    KILN_ASSIGN_OR_RETURN(v.records, jobs_->count_records(v.row.id));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = progress_.find(v.row.id);
    if (it != progress_.end()) v.progress = it->second;
    v.version = changes_;
    out.push_back(std::move(v));
  }
  return out;
}

Status JobManager::cancel(int64_t id) { return stop_job(id, StopReason::kCancel); }
Status JobManager::pause(int64_t id) { return stop_job(id, StopReason::kPause); }

Status JobManager::stop_job(int64_t id, StopReason reason) {
  const bool pause = reason == StopReason::kPause;
  const store::JobState target = pause ? store::JobState::kPaused : store::JobState::kCancelled;
  const std::string why = pause ? "paused on request" : "cancelled on request";
  // The job may change state under us (another daemon claims or ends it): read, then change
  // only if it is still as read.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::unique_lock<std::mutex> lock(mu_);
    KILN_ASSIGN_OR_RETURN(store::JobRow row, jobs_->get(id));
    if (store::is_final(row.state) || (pause && row.state == store::JobState::kPaused)) {
      return InvalidArgument(job_name(id) + " is " + store::job_state_name(row.state) +
                             (pause ? "" : " already"));
    }
    auto it = running_.find(id);
    if (it != running_.end()) {
      if (it->second->reason == StopReason::kNone || it->second->reason == StopReason::kPreempt)
        it->second->reason = reason;
      it->second->stop.request_stop();
      changed();
      return Status::Ok();
    }
    lock.unlock();
    Result<bool> done =
        row.state == store::JobState::kRunning
            ? jobs_->request_job(id, pause ? store::JobRequest::kPause : store::JobRequest::kCancel,
                                 now_s())
            : jobs_->change_state(id, row.state, target, why, now_s());
    if (!done.ok()) return done.status();
    if (*done) {
      if (row.state == store::JobState::kRunning) {
        log(job_name(id) + ": asked " + store::owner_host(row.owner) + " to " +
            (pause ? "pause" : "cancel") + " it");
      }
      lock.lock();
      changed();
      return Status::Ok();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return RuntimeError(job_name(id) + " kept changing state; try again");
}

Status JobManager::resume(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_ASSIGN_OR_RETURN(store::JobRow row, jobs_->get(id));
  if (row.state != store::JobState::kPaused) {
    return InvalidArgument(job_name(id) + " is " + store::job_state_name(row.state) +
                           ", not paused");
  }
  if (running_.count(id)) return InvalidArgument(job_name(id) + " is still pausing");
  KILN_ASSIGN_OR_RETURN(bool resumed, jobs_->change_state(id, store::JobState::kPaused,
                                                          store::JobState::kQueued, "", now_s()));
  if (!resumed) return InvalidArgument(job_name(id) + " changed state meanwhile; look again");
  changed();
  return Status::Ok();
}

Result<std::string> JobManager::export_tvm_log(int64_t id) {
  KILN_RETURN_IF_ERROR(jobs_->get(id).status());
  store::RecordFilter filter;
  filter.source = store::job_source(id);
  KILN_ASSIGN_OR_RETURN(std::vector<store::Record> records, records_->records(filter));
  // The job's tasks, in the order it first measured them; for each, the store's best record (the
  // one `kiln compile` would use, whoever measured it).
  std::vector<std::tuple<std::string, std::string, std::string>> tasks;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const store::Record& r : records) {
    auto key = std::make_tuple(r.target, r.task_name, r.workload);
    if (seen.insert(key).second) tasks.push_back(key);
  }
  std::string log;
  for (const auto& [target, task_name, workload] : tasks) {
    KILN_ASSIGN_OR_RETURN(std::optional<store::Record> best,
                          records_->best(target, task_name, workload));
    if (!best) continue;  // no config of the task succeeded
    KILN_ASSIGN_OR_RETURN(std::string line, store::to_tvm_line(*best));
    log += line + "\n";
  }
  return log;
}

uint64_t JobManager::change_counter() {
  std::lock_guard<std::mutex> lock(mu_);
  return changes_;
}

bool JobManager::draining() {
  std::lock_guard<std::mutex> lock(mu_);
  return draining_;
}

uint64_t JobManager::wait_for_change(uint64_t seen, double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
               [&] { return changes_ != seen || draining_; });
  return changes_;
}

void JobManager::drain() {
  std::thread scheduler;
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    draining_ = true;
    for (auto& [id, r] : running_) {
      if (r->reason == StopReason::kNone) r->reason = StopReason::kDrain;
      r->stop.request_stop();
    }
    changed();
    scheduler = std::move(scheduler_);
  }
  if (scheduler.joinable()) scheduler.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, r] : running_) threads.push_back(std::move(r->thread));
  }
  for (std::thread& t : threads) {
    if (t.joinable()) t.join();
  }
  write_pending_ends();  // once more; what the store still cannot take, a lease expiry settles
  std::lock_guard<std::mutex> lock(mu_);
  running_.clear();
}

}  // namespace kiln::daemon
