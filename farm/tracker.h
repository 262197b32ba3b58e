// The tracker's logic, free of gRPC: runners register under a key (a device kind,
// e.g. znver5-2c) with their capabilities and send heartbeats; clients queue for a runner of a
// key (higher priority first, FIFO within a priority) and get a lease with a time limit; a runner
// that fails `max_consecutive_faults` measurements in a row, or misses heartbeats for
// `heartbeat_timeout_s`, is quarantined for `quarantine_s` and reported; one silent for
// `forget_after_s` is removed from the table (a dead runner is gone from the status; a runner
// heard from again registers anew).
//
// Time comes from an Env (common/env.h), so tests move the clock instead of waiting. Not
// thread-safe: the gRPC service (farm/tracker_service.h) holds one mutex around every call.
// Time-driven changes (a lease expiring, a runner going silent, a quarantine ending) happen in
// tick(), which every public method calls first.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/env.h"
#include "common/measure_error.h"
#include "common/status.h"
#include "farm/convert.h"

namespace kiln::farm {

struct TrackerOptions {
  double heartbeat_interval_s = 5;  // told to runners at registration
  double heartbeat_timeout_s = 30;  // silent this long: quarantined as lost
  int max_consecutive_faults = 3;   // runner faults in a row before quarantine
  double quarantine_s = 300;        // how long a quarantine lasts at least
  double max_lease_s = 24 * 3600;   // longest lease a client may ask for
  int max_queue_per_key = 10'000;   // waiting requests per key
  double forget_after_s = 600;      // silent this long: removed (and reported)
};

enum class RunnerState { kFree, kBusy, kQuarantined };
const char* runner_state_name(RunnerState s);  // "free", "busy", "quarantined"

struct LeaseGrant {
  std::string lease_id;
  std::string runner_id;
  RunnerCapabilities runner;
  double seconds_left = 0;
};

struct RunnerReport {
  std::string runner_id;
  RunnerCapabilities capabilities;
  RunnerState state = RunnerState::kFree;
  int64_t trials = 0;
  int64_t errors = 0;  // trials with an error number other than 0
  int consecutive_faults = 0;
  double last_seen_s_ago = 0;
  std::string quarantine_reason;  // when quarantined
  double quarantine_left_s = 0;   // when quarantined (0: until it is heard from again)
  std::string lease_client;       // when busy
};

struct KeyReport {
  std::string key;
  int free = 0;
  int busy = 0;
  int quarantined = 0;
  int queued = 0;
};

struct FarmReport {
  std::vector<KeyReport> keys;        // sorted by key
  std::vector<RunnerReport> runners;  // sorted by key, then runner id
};

struct MeasureOutcome {
  MeasureError error = MeasureError::kNoError;
  bool runner_fault = false;  // the runner, not the config, failed
};

class Tracker {
 public:
  // Called with one line whenever a runner is quarantined or released from quarantine.
  using Reporter = std::function<void(const std::string& line)>;

  explicit Tracker(TrackerOptions options = {}, Env* env = nullptr, Reporter reporter = {});

  const TrackerOptions& options() const { return options_; }

  // Adds a runner, or replaces the one registered under the same name (a restarted runner): its
  // lease ends, its counters stay. Returns the runner id (its name). A runner starts free, unless
  // it is still in quarantine.
  Result<std::string> register_runner(const RunnerCapabilities& caps);
  // REQUIRES has_runner(runner_id) (the service answers NOT_FOUND otherwise: register again).
  RunnerState heartbeat(const std::string& runner_id);
  bool has_runner(const std::string& runner_id) const { return runners_.count(runner_id) > 0; }
  // A lease that is still held (not released, expired or ended by a quarantine).
  bool has_lease(const std::string& lease_id) const { return leases_.count(lease_id) > 0; }
  // The lease `lease_id` when it is held on `runner_id` now (a runner checks the lease a Measure
  // request carries); nullopt for an unknown, ended or expired lease or another runner's.
  std::optional<LeaseGrant> held_lease(const std::string& lease_id, const std::string& runner_id);

  // Queues a request for a runner of `key`; returns its ticket. Granted at once when a runner is
  // free and no earlier request of at least this priority waits. Errors: bad key, lease_seconds
  // not in (0, max_lease_s], full queue.
  Result<uint64_t> request(const std::string& key, int priority, double lease_seconds,
                           const std::string& client);
  // The lease granted to a ticket, if it was; the ticket is then spent. A grant whose lease ended
  // before it was taken is queued again, first of its priority.
  std::optional<LeaseGrant> take_grant(uint64_t ticket);
  // Withdraws a waiting ticket (the client gave up). A lease granted meanwhile is released.
  void cancel(uint64_t ticket);

  // The lease functions below REQUIRE has_lease(lease_id) after a tick() (the service answers
  // NOT_FOUND otherwise).
  // Extends the lease to `lease_seconds` from now. kInvalidArgument for a bad duration.
  Result<LeaseGrant> renew(const std::string& lease_id, double lease_seconds);
  // Ends the lease; its runner is free again (unless quarantined).
  void release(const std::string& lease_id);
  // Counts the outcomes against the lease's runner; quarantines it after too many runner faults
  // in a row (which also ends the lease). Returns the runner's state afterwards.
  RunnerState report(const std::string& lease_id, const std::vector<MeasureOutcome>& outcomes);

  FarmReport status();

  // Applies what time has changed: expired leases free their runners, silent runners are
  // quarantined, quarantines end, waiting requests get free runners.
  void tick();

 private:
  struct Runner {
    RunnerCapabilities caps;
    Env::Clock::time_point last_seen;
    std::string lease_id;      // non-empty while busy
    bool quarantined = false;  // until quarantine_until, and then until heard from again
    std::string quarantine_reason;
    Env::Clock::time_point quarantine_until;
    int64_t trials = 0;
    int64_t errors = 0;
    int consecutive_faults = 0;
  };
  struct LeaseEntry {
    std::string runner_id;
    std::string client;
    Env::Clock::time_point expires;
  };
  struct Waiting {
    uint64_t ticket;
    int priority;
    double lease_seconds;
    std::string client;
  };

  RunnerState state_of(const Runner& r) const;
  void quarantine(Runner& r, const std::string& id, const std::string& why);
  void end_lease(
      std::string lease_id);  // by value: callers pass the runner's own, which this clears
  // Grants free runners to the waiting requests of `key`, best first.
  void grant(const std::string& key);
  Status check_lease_seconds(double s) const;

  TrackerOptions options_;
  Env* env_;
  Reporter reporter_;
  std::map<std::string, Runner> runners_;  // by id (= name)
  std::map<std::string, LeaseEntry> leases_;
  // Per key, waiting requests in grant order: priority descending, then arrival.
  std::map<std::string, std::deque<Waiting>> queues_;
  struct Granted {
    LeaseGrant grant;
    Waiting request;  // requeued if the lease ends before the client takes it
  };
  std::map<uint64_t, Granted> grants_;  // granted, not yet taken
  uint64_t next_ticket_ = 1;
  uint64_t next_lease_ = 1;
};

}  // namespace kiln::farm
