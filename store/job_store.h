// The daemon's jobs (`kiln serve`), kept beside the records of the same store: each job's spec
// as submitted (YAML text and the directory its relative paths are relative to), its priority,
// state and reason, and the seconds spent tuning it so far. A job's records carry job_source(id)
// as their source, so its trials are counted exactly from what is committed, whatever happened
// to the process that measured them.
//
// Unlike records, jobs are mutable: the state changes, the seconds grow. JobStore is the
// interface a backend implements (SQLite: store/sqlite/sqlite_job_store.h, the jobs table of
// schema versions 5 and 7; PostgreSQL: store/postgres/pg_job_store.h); open_job_store
// (store/open_store.h) opens one. Every call is atomic, and a JobStore may be used from several
// threads.
//
// Owning a job: a running job belongs to one daemon (its owner, a string unique to the daemon's
// process) through a lease that the owner renews; several daemons on one store (a PostgreSQL
// store shared by a team) take queued jobs with claim_job, and a job whose owner stopped renewing
// (it died, or lost the network) can be claimed by another once the lease has expired. A job is
// paused or cancelled by a request that its owner sees at its next look at the jobs. Times are
// unix seconds of the caller's clock: the daemons of one store need synchronized clocks (NTP), as
// the record claims already do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::store {

enum class JobState { kQueued, kRunning, kPaused, kDone, kFailed, kCancelled };
// What was asked of a running job's owner by someone else (a client of another daemon).
enum class JobRequest { kNone, kPause, kCancel };
const char* job_state_name(JobState s);  // "queued", "running", ...
std::optional<JobState> parse_job_state(const std::string& name);
// done, failed and cancelled: the job will not run again.
bool is_final(JobState s);
const char* job_request_name(JobRequest r);  // "", "pause", "cancel"
std::optional<JobRequest> parse_job_request(const std::string& name);

struct JobRow {
  int64_t id = 0;
  std::string name;
  std::string spec;      // YAML, as submitted
  std::string base_dir;  // relative paths of the spec are relative to it
  int64_t priority = 0;
  JobState state = JobState::kQueued;
  std::string reason;  // why it failed, was cancelled or paused; what it ended with
  double seconds = 0;  // tuning time spent, over every run of the job
  double submitted = 0;
  double updated = 0;  // unix seconds
  // The daemon running it ("" when none; daemon_identity() of that daemon) and until when its
  // lease holds unless renewed; what was asked of that daemon.
  std::string owner;
  double lease_expires = 0;
  JobRequest request = JobRequest::kNone;
};

// A running job of an owner's, as renew_jobs found it.
struct OwnedJob {
  int64_t id = 0;
  JobRequest request = JobRequest::kNone;
};

// An owner name no other process has: "HOST:PID:RANDOM".
std::string daemon_identity();
// What kiln jobs shows of an owner: "HOST:PID" (the identity without its random part).
std::string owner_host(const std::string& owner);

// The source written on every record of job `id`: "kiln serve job <id>".
std::string job_source(int64_t id);
// The job id of a record source written by job_source; nullopt for any other source.
std::optional<int64_t> job_of_source(const std::string& source);

class JobStore {
 public:
  virtual ~JobStore() = default;

  // A new queued job; returns its id (increasing, never reused).
  virtual Result<int64_t> add(const std::string& name, const std::string& spec,
                              const std::string& base_dir, int64_t priority, double now) = 0;
  virtual Result<bool> exists(int64_t id) = 0;
  // kInvalidArgument "no job N" for an unknown id.
  virtual Result<JobRow> get(int64_t id) = 0;
  // Every job, by id.
  virtual Result<std::vector<JobRow>> list() = 0;
  // kInvalidArgument "no job N" for an unknown id (also for add_seconds).
  virtual Status set_state(int64_t id, JobState state, const std::string& reason, double now) = 0;
  // Adds tuning time spent (called after each committed batch).
  virtual Status add_seconds(int64_t id, double seconds, double now) = 0;
  // Records whose source is job_source(id).
  virtual Result<int64_t> count_records(int64_t id) = 0;
  // Running jobs become queued again and lose their owners (a daemon starting after a crash,
  // alone on its store, picks them up); returns how many.
  virtual Result<int64_t> requeue_running(double now) = 0;

  // Makes `owner` the owner of job `id` until now + lease_s: a queued job, a running one whose
  // lease expired before `now`, or one `owner` holds already. The job becomes running, with no
  // reason; a request made of its previous owner stays (the new owner carries it out). false: it is
  // not claimable (another owner's live lease, paused, final); kInvalidArgument "no job N" for an
  // unknown id.
  virtual Result<bool> claim_job(int64_t id, const std::string& owner, double lease_s,
                                 double now) = 0;
  // Extends `owner`'s leases of the jobs `ids` to now + lease_s; returns the ones it still owns
  // (running, its owner), each with what was requested of it. A job left out was taken over by
  // another owner after its lease expired.
  virtual Result<std::vector<OwnedJob>> renew_jobs(const std::string& owner,
                                                   const std::vector<int64_t>& ids, double lease_s,
                                                   double now) = 0;
  // Gives up a running job `owner` owns, leaving it in `state` with `reason`; false (nothing
  // changed) when `owner` does not own it any more.
  virtual Result<bool> release_job(int64_t id, const std::string& owner, JobState state,
                                   const std::string& reason, double now) = 0;
  // Asks the owner of running job `id` to pause or cancel it; false when it is not running.
  virtual Result<bool> request_job(int64_t id, JobRequest request, double now) = 0;
  // set_state, only while the job is in state `expected` (and owned by nobody); false otherwise.
  virtual Result<bool> change_state(int64_t id, JobState expected, JobState state,
                                    const std::string& reason, double now) = 0;
};

}  // namespace kiln::store
