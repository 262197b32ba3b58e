// The daemon's jobs (`kiln serve`), kept beside the records of the same store: each job's spec
// as submitted (YAML text and the directory its relative paths are relative to), its priority,
// state and reason, and the seconds spent tuning it so far. A job's records carry job_source(id)
// as their source, so its trials are counted exactly from what is committed, whatever happened
// to the process that measured them.
//
// Unlike records, jobs are mutable: the state changes, the seconds grow. JobStore is the
// interface a backend implements (SQLite: store/sqlite/sqlite_job_store.h, the jobs table of
// schema version 5); open_job_store (store/open_store.h) opens one. Every call is atomic, and a
// JobStore may be used from several threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::store {

enum class JobState { kQueued, kRunning, kPaused, kDone, kFailed, kCancelled };
const char* job_state_name(JobState s);  // "queued", "running", ...
std::optional<JobState> parse_job_state(const std::string& name);
// done, failed and cancelled: the job will not run again.
bool is_final(JobState s);

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
};

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
  // Running jobs become queued again (a daemon starting after a crash or a drain picks them up);
  // returns how many.
  virtual Result<int64_t> requeue_running(double now) = 0;
};

}  // namespace kiln::store
