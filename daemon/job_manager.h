// The daemon's job queue (`kiln serve`): jobs live in the store (store/job_store.h) next to their
// records; this runs them.
//
// Scheduling: at most max_jobs jobs run at once, chosen by priority (higher first), then by id.
// A queued job of higher priority than a running one preempts it when no slot is free: the
// running one stops after its batch in flight is committed and goes back to the queue. Running
// jobs take turns on the machine a round at a time through one MeasureGate
// (daemon/measure_gate.h), the higher priority first: nothing of one job (a build, a model fit, a
// kernel) runs while another times a kernel.
//
// Each job is a tuner::ModelTuneJob (a workload list is a model whose tasks weigh 1) on its own
// builder pool and runner, writing records whose source is store::job_source(id). Resuming is
// the tuning loop's: configs the store settles are not measured again and count toward the
// budget, so a job started again after any crash picks up from its committed records. A time
// budget counts the seconds spent in every run (JobStore::add_seconds after each batch).
//
// A model job's model is imported (at submit and at each start) and compiled (its
// export.compiled_model) in a child process (daemon/model_worker.h): a model that crashes ONNX's
// or kiln's code fails its job, not the daemon. Exports go only where export_paths.h allows.
//
// Several daemons on one store (a PostgreSQL store shared by a team; SQLite allows one daemon,
// locked): every daemon sees every job. A job is run by the daemon that claims it
// (JobStore::claim_job) when it has a free slot, the highest priority first; the owner renews its
// lease every job_lease_s / 4 seconds, and a job whose owner died (SIGKILL, power, network) is
// claimed by another daemon once its lease expired, and resumed from its committed records. A
// daemon whose slots are full preempts its own job for a queued one of higher priority only after
// that one waited kTeamPreemptGraceS (a daemon with a free slot takes it first). Cancel and pause
// of a job another daemon runs are requests that the owner carries out at its next look at the
// jobs (every second). A job's end that cannot be written (the store is down) is written when the
// store is back, unless another daemon took the job over meanwhile.
//
// A job whose spec no longer plans (the model file is gone or unreadable) or whose run fails
// (e.g. its tracker is unreachable, its farm's runners are gone: daemon/farm_watch.h, the store
// cannot be written) is failed with the reason; the others go on.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "daemon/measure_gate.h"
#include "jobs/job_spec.h"
#include "store/job_store.h"
#include "store/store.h"

namespace kiln::daemon {

struct TaskProgress {
  std::string template_name;
  std::string workload;
  double weight = 1;
  int64_t trials = 0;
  double best_seconds = 0;  // 0: nothing measured successfully yet
  double best_gflops = 0;
};

// What a running (or last run) job reported after its latest committed batch.
struct JobProgress {
  std::vector<TaskProgress> tasks;
  int current_task = -1;
  int64_t trials = 0;    // settled trials of the job's tasks in the store
  double latency_s = 0;  // estimated end-to-end latency, Σ weight x best (0: unknown)
  bool latency_complete = false;
};

struct JobView {
  store::JobRow row;
  int64_t records = 0;  // records written by the job (exact: counted in the store)
  JobProgress progress;
  uint64_t version = 0;  // grows with every change of the job's view
};

struct JobManagerOptions {
  std::string db;
  int max_jobs = 2;
  // The kiln binary: builder workers and the local runner's child are exec'd from it (the daemon
  // has threads, so it must not fork copies of itself).
  std::string worker_binary;
  // Where jobs may write their exports (daemon/export_paths.h); empty: the store's directory.
  std::vector<std::string> export_dirs;
  // Called with one line for the daemon's log (job started, finished, failed...).
  std::function<void(const std::string&)> log;
  // How long a running job stays this daemon's without a renewal: another daemon on the store
  // takes over a job this long after its daemon died. Longer than the store's reconnection
  // window (30 s) plus the renewal period (a quarter of it), so that a daemon that is only
  // reconnecting renews in time and a job never runs on two daemons at once.
  double job_lease_s = 60;
};

// How long a queued job waits before a daemon whose slots are full preempts a job of lower
// priority for it (on a store several daemons share).
inline constexpr double kTeamPreemptGraceS = 3;

class JobManager {
 public:
  // Opens the store. A SQLite store is locked for this daemon (flock on the store file: a second
  // daemon on the same file, through any path, is refused) and the jobs left running by a
  // previous daemon are queued again; on a PostgreSQL store, they are taken over once their
  // leases expire.
  static Result<std::unique_ptr<JobManager>> open(JobManagerOptions options);
  ~JobManager();  // drains

  // Starts the scheduling thread.
  void start();
  // Stops every running job after its batch in flight is committed, waits for them, and leaves
  // them queued (the next daemon resumes them). Idempotent.
  void drain();

  // Validates the spec (parse_job_spec, relative paths against base_dir; its exports against
  // export_dirs and the store: check_export_path) and queues it.
  Result<int64_t> submit(const std::string& spec_yaml, const std::string& base_dir);
  Result<bool> exists(int64_t id) { return jobs_->exists(id); }
  Result<JobView> get(int64_t id);
  Result<std::vector<JobView>> list();
  // kInvalidArgument "no job N" for an unknown id; kUnimplemented-free: a state change that makes
  // no sense (cancel a done job) is kInvalidArgument saying why.
  Status cancel(int64_t id);
  Status pause(int64_t id);
  Status resume(int64_t id);
  // For each task the job measured, the store's best record (the one `kiln compile` uses,
  // whoever measured it), as TVM autotvm log lines (v0.2); a task without a successful record
  // has no line.
  Result<std::string> export_tvm_log(int64_t id);

  // Blocks until some job's view changes after `seen` (a value of change_counter()), or
  // `timeout_s` passes, or the manager drains; returns the counter now.
  uint64_t wait_for_change(uint64_t seen, double timeout_s);
  uint64_t change_counter();
  bool draining();
  MeasureGate::Load measure_gate_load() { return gate_.load(); }

 private:
  enum class StopReason { kNone, kPause, kCancel, kPreempt, kDrain, kLost };
  struct Running {
    std::stop_source stop;
    StopReason reason = StopReason::kNone;
    int64_t priority = 0;
    bool finished = false;
    std::thread thread;
  };

  explicit JobManager(JobManagerOptions options);
  void schedule_loop();
  void schedule_once(std::unique_lock<std::mutex>& lock);
  void run_job(int64_t id);
  // Joins the threads of finished jobs.  REQUIRES mu_ held
  void reap_finished();
  // Writes the ends of jobs the store could not take when they ended; the ones written (or no
  // longer this daemon's) are dropped from pending_.
  void write_pending_ends();
  // Renews this daemon's leases when due; jobs another daemon took over are stopped.
  void renew_leases(std::unique_lock<std::mutex>& lock);
  // Claims job `row` and starts it (or, when a request was made of its dead owner, carries the
  // request out).  REQUIRES mu_ held through `lock`, which it releases while claiming.
  void claim_and_start(std::unique_lock<std::mutex>& lock, const store::JobRow& row);
  // Cancel and pause: stops a job this daemon runs, asks the owner of one another daemon runs,
  // changes the state of one nobody runs.
  Status stop_job(int64_t id, StopReason reason);
  // Runs the job until it is done (true, with what it ended with in *summary) or stopped
  // (false); an error fails the job.
  Result<bool> run_job_body(int64_t id, Running& running, std::string* summary);
  Status write_exports(int64_t id, const store::JobRow& row, const JobSpec& spec);
  Status check_exports(const JobSpec& spec);
  void changed();  // REQUIRES mu_ held
  void log(const std::string& line);

  JobManagerOptions options_;
  const std::string owner_ = store::daemon_identity();
  bool shared_store_ = false;  // other daemons may run jobs of this store (PostgreSQL)
  int lock_fd_ = -1;
  std::unique_ptr<store::JobStore> jobs_;
  std::unique_ptr<store::Store> records_;
  MeasureGate gate_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, std::unique_ptr<Running>> running_;
  std::map<int64_t, JobProgress> progress_;
  struct PendingEnd {
    store::JobState state;
    std::string reason;
  };
  std::map<int64_t, PendingEnd> pending_;  // ends the store could not take yet
  double last_renew_ = 0;
  size_t jobs_signature_ = 0;  // of the jobs last read: a change wakes watchers
  std::string last_store_error_;
  uint64_t changes_ = 0;
  bool draining_ = false;
  bool stopped_ = false;
  std::thread scheduler_;
};

}  // namespace kiln::daemon
