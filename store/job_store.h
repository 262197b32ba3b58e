// The daemon's jobs (`kiln serve`), in the same SQLite file as the records (schema version 5):
// each job's spec as submitted (YAML text and the directory its relative paths are relative to),
// its priority, state and reason, and the seconds spent tuning it so far. A job's records carry
// job_source(id) as their source, so its trials are counted exactly from what is committed,
// whatever happened to the process that measured them.
//
// Unlike records, jobs are mutable: the state changes, the seconds grow. Every call is one
// transaction; a JobStore has its own connection (WAL, busy timeout, synchronous=FULL, as
// RecordStore) and may be used from several threads (calls are serialized by a mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::store {

namespace sqlite {
class Database;
}

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
  // Opens (creating and migrating like RecordStore::open) the store at `path`; read_only opens an
  // existing store of the current schema without writing to it (kiln report, beside a daemon).
  static Result<std::unique_ptr<JobStore>> open(const std::string& path, bool read_only = false);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // A new queued job; returns its id (increasing, never reused).
  Result<int64_t> add(const std::string& name, const std::string& spec, const std::string& base_dir,
                      int64_t priority, double now);
  Result<bool> exists(int64_t id);
  // kInvalidArgument "no job N" for an unknown id.
  Result<JobRow> get(int64_t id);
  // Every job, by id.
  Result<std::vector<JobRow>> list();
  Status set_state(int64_t id, JobState state, const std::string& reason, double now);
  // Adds tuning time spent (called after each committed batch).
  Status add_seconds(int64_t id, double seconds, double now);
  // Records whose source is job_source(id).
  Result<int64_t> count_records(int64_t id);
  // Running jobs become queued again (a daemon starting after a crash or a drain picks them up).
  Result<int64_t> requeue_running(double now);

 private:
  explicit JobStore(std::unique_ptr<sqlite::Database> db);
  std::mutex mu_;
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace kiln::store
