#include "farm/tracker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>

namespace kiln::farm {

const char* runner_state_name(RunnerState s) {
  switch (s) {
    case RunnerState::kFree:
      return "free";
    case RunnerState::kBusy:
      return "busy";
    case RunnerState::kQuarantined:
      return "quarantined";
  }
  return "free";
}

namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f s", s);
  return buf;
}

// 16 random hex digits, so that a lease id cannot be guessed from another.
std::string random_hex() {
  static std::random_device rd;
  static std::mt19937_64 gen(((uint64_t)rd() << 32) ^ rd());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(gen()));
  return buf;
}

}  // namespace

Tracker::Tracker(TrackerOptions options, Env* env, Reporter reporter)
    : options_(options), env_(env ? env : &Env::real()), reporter_(std::move(reporter)) {}

RunnerState Tracker::state_of(const Runner& r) const {
  if (r.quarantined) return RunnerState::kQuarantined;
  if (!r.lease_id.empty()) return RunnerState::kBusy;
  return RunnerState::kFree;
}

void Tracker::quarantine(Runner& r, const std::string& id, const std::string& why) {
  if (!r.lease_id.empty()) end_lease(r.lease_id);
  r.quarantined = true;
  r.quarantine_reason = why;
  r.quarantine_until = time_after(env_->now(), options_.quarantine_s);
  if (reporter_) {
    reporter_("runner " + id + " (key " + r.caps.key + ") quarantined for " +
              seconds_text(options_.quarantine_s) + ": " + why);
  }
}

void Tracker::end_lease(std::string lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  auto r = runners_.find(it->second.runner_id);
  if (r != runners_.end() && r->second.lease_id == lease_id) r->second.lease_id.clear();
  leases_.erase(it);
  // A grant its client has not taken yet goes back to the head of its priority in the queue.
  for (auto g = grants_.begin(); g != grants_.end(); ++g) {
    if (g->second.grant.lease_id != lease_id) continue;
    const std::string& key = g->second.grant.runner.key;
    std::deque<Waiting>& queue = queues_[key];
    const Waiting& w = g->second.request;
    auto pos = std::find_if(queue.begin(), queue.end(),
                            [&](const Waiting& q) { return q.priority <= w.priority; });
    queue.insert(pos, w);
    grants_.erase(g);
    break;
  }
}

void Tracker::tick() {
  const auto now = env_->now();
  std::vector<std::string> expired;
  for (const auto& [id, lease] : leases_) {
    if (now >= lease.expires) expired.push_back(id);
  }
  for (const std::string& id : expired) end_lease(id);
  for (auto it = runners_.begin(); it != runners_.end();) {
    const std::string& id = it->first;
    Runner& r = it->second;
    double silent_s = seconds_between(r.last_seen, now);
    if (silent_s > options_.forget_after_s) {
      if (!r.lease_id.empty()) end_lease(r.lease_id);
      if (reporter_) {
        reporter_("runner " + id + " (key " + r.caps.key + ") removed: no heartbeat for " +
                  seconds_text(silent_s));
      }
      it = runners_.erase(it);
      continue;
    }
    if (!r.quarantined && silent_s > options_.heartbeat_timeout_s) {
      quarantine(r, id, "no heartbeat for " + seconds_text(silent_s));
    } else if (r.quarantined && now >= r.quarantine_until &&
               silent_s <= options_.heartbeat_timeout_s) {
      // The time is served and the runner is alive: back in service.
      r.quarantined = false;
      r.consecutive_faults = 0;
      r.quarantine_reason.clear();
      if (reporter_) reporter_("runner " + id + " (key " + r.caps.key + ") back in service");
    }
    ++it;
  }
  std::vector<std::string> waiting_keys;  // grant() may erase a queue: not while iterating
  for (const auto& [key, queue] : queues_) waiting_keys.push_back(key);
  for (const std::string& key : waiting_keys) grant(key);
}

Result<std::string> Tracker::register_runner(const RunnerCapabilities& caps) {
  tick();
  KILN_RETURN_IF_ERROR(check_name("RunnerCapabilities.key", caps.key));
  KILN_RETURN_IF_ERROR(check_name("RunnerCapabilities.name", caps.name));
  auto it = runners_.find(caps.name);
  if (it == runners_.end()) {
    it = runners_.emplace(caps.name, Runner{}).first;
  } else {
    // A restarted runner: whoever leased the old process lost it.
    if (!it->second.lease_id.empty()) end_lease(it->second.lease_id);
    if (it->second.caps.key != caps.key) it->second.consecutive_faults = 0;
  }
  Runner& r = it->second;
  r.caps = caps;
  r.last_seen = env_->now();
  grant(caps.key);
  return caps.name;
}

RunnerState Tracker::heartbeat(const std::string& runner_id) {
  Runner& r = runners_.at(runner_id);
  r.last_seen = env_->now();
  tick();
  return state_of(runners_.at(runner_id));
}

Status Tracker::check_lease_seconds(double s) const {
  if (!std::isfinite(s) || s <= 0 || s > options_.max_lease_s) {
    return InvalidArgument("LeaseRequest.lease_seconds: must be in (0, " +
                           std::to_string(options_.max_lease_s) + "], got " + std::to_string(s));
  }
  return Status::Ok();
}

Result<uint64_t> Tracker::request(const std::string& key, int priority, double lease_seconds,
                                  const std::string& client) {
  tick();
  KILN_RETURN_IF_ERROR(check_name("LeaseRequest.key", key));
  KILN_RETURN_IF_ERROR(check_lease_seconds(lease_seconds));
  std::deque<Waiting>& queue = queues_[key];
  if (static_cast<int>(queue.size()) >= options_.max_queue_per_key) {
    return InvalidArgument("LeaseRequest.key: the queue of " + key + " is full (" +
                           std::to_string(queue.size()) + " requests wait)");
  }
  uint64_t ticket = next_ticket_++;
  // After every request of at least this priority: FIFO within a priority.
  auto pos = std::find_if(queue.begin(), queue.end(),
                          [&](const Waiting& w) { return w.priority < priority; });
  queue.insert(pos, Waiting{ticket, priority, lease_seconds, client});
  grant(key);
  return ticket;
}

void Tracker::grant(const std::string& key) {
  auto q = queues_.find(key);
  if (q == queues_.end()) return;
  std::deque<Waiting>& queue = q->second;
  const auto now = env_->now();
  while (!queue.empty()) {
    // The free runner of this key seen most recently (any free one would do; this one is
    // least likely to have gone away).
    Runner* best = nullptr;
    std::string best_id;
    for (auto& [id, r] : runners_) {
      if (r.caps.key != key || state_of(r) != RunnerState::kFree) continue;
      if (seconds_between(r.last_seen, now) > options_.heartbeat_timeout_s) continue;
      if (!best || r.last_seen > best->last_seen) {
        best = &r;
        best_id = id;
      }
    }
    if (!best) break;
    Waiting w = queue.front();
    queue.pop_front();
    std::string lease_id = "lease-" + std::to_string(next_lease_++) + "-" + random_hex();
    leases_[lease_id] = LeaseEntry{best_id, w.client, time_after(now, w.lease_seconds)};
    best->lease_id = lease_id;
    grants_[w.ticket] = Granted{LeaseGrant{lease_id, best_id, best->caps, w.lease_seconds}, w};
  }
  if (queue.empty()) queues_.erase(q);
}

std::optional<LeaseGrant> Tracker::take_grant(uint64_t ticket) {
  auto it = grants_.find(ticket);
  if (it == grants_.end()) return std::nullopt;
  LeaseGrant g = std::move(it->second.grant);
  grants_.erase(it);
  g.seconds_left = std::max(0.0, seconds_between(env_->now(), leases_.at(g.lease_id).expires));
  return g;
}

void Tracker::cancel(uint64_t ticket) {
  auto g = grants_.find(ticket);
  if (g != grants_.end()) {
    std::string key = g->second.grant.runner.key;
    std::string lease_id = g->second.grant.lease_id;
    grants_.erase(g);
    end_lease(lease_id);
    grant(key);
    return;
  }
  for (auto q = queues_.begin(); q != queues_.end(); ++q) {
    auto& queue = q->second;
    auto it = std::find_if(queue.begin(), queue.end(),
                           [&](const Waiting& w) { return w.ticket == ticket; });
    if (it != queue.end()) {
      queue.erase(it);
      if (queue.empty()) queues_.erase(q);
      return;
    }
  }
}

Result<LeaseGrant> Tracker::renew(const std::string& lease_id, double lease_seconds) {
  KILN_RETURN_IF_ERROR(check_lease_seconds(lease_seconds));
  LeaseEntry& lease = leases_.at(lease_id);
  lease.expires = time_after(env_->now(), lease_seconds);
  const Runner& r = runners_.at(lease.runner_id);
  return LeaseGrant{lease_id, lease.runner_id, r.caps, lease_seconds};
}

std::optional<LeaseGrant> Tracker::held_lease(const std::string& lease_id,
                                              const std::string& runner_id) {
  tick();
  auto lease = leases_.find(lease_id);
  if (lease == leases_.end() || lease->second.runner_id != runner_id) return std::nullopt;
  const Runner& r = runners_.at(runner_id);
  return LeaseGrant{lease_id, runner_id, r.caps,
                    std::max(0.0, seconds_between(env_->now(), lease->second.expires))};
}

void Tracker::release(const std::string& lease_id) {
  std::string key = runners_.at(leases_.at(lease_id).runner_id).caps.key;
  end_lease(lease_id);
  grant(key);
}

RunnerState Tracker::report(const std::string& lease_id,
                            const std::vector<MeasureOutcome>& outcomes) {
  const std::string runner_id = leases_.at(lease_id).runner_id;
  Runner& r = runners_.at(runner_id);
  for (const MeasureOutcome& o : outcomes) {
    ++r.trials;
    if (o.error != MeasureError::kNoError) ++r.errors;
    r.consecutive_faults = o.runner_fault ? r.consecutive_faults + 1 : 0;
  }
  if (r.consecutive_faults >= options_.max_consecutive_faults && !r.quarantined) {
    quarantine(r, runner_id,
               std::to_string(r.consecutive_faults) + " failed measurements in a row");
  }
  return state_of(r);
}

FarmReport Tracker::status() {
  tick();
  const auto now = env_->now();
  FarmReport report;
  std::map<std::string, KeyReport> keys;
  for (const auto& [key, queue] : queues_) {
    keys[key].key = key;
    keys[key].queued = static_cast<int>(queue.size());
  }
  for (const auto& [id, r] : runners_) {
    KeyReport& k = keys[r.caps.key];
    k.key = r.caps.key;
    RunnerReport rr;
    rr.runner_id = id;
    rr.capabilities = r.caps;
    rr.state = state_of(r);
    rr.trials = r.trials;
    rr.errors = r.errors;
    rr.consecutive_faults = r.consecutive_faults;
    rr.last_seen_s_ago = std::max(0.0, seconds_between(r.last_seen, now));
    switch (rr.state) {
      case RunnerState::kFree:
        ++k.free;
        break;
      case RunnerState::kBusy:
        ++k.busy;
        rr.lease_client = leases_.at(r.lease_id).client;
        break;
      case RunnerState::kQuarantined:
        ++k.quarantined;
        rr.quarantine_reason = r.quarantine_reason;
        rr.quarantine_left_s = std::max(0.0, seconds_between(now, r.quarantine_until));
        break;
    }
    report.runners.push_back(std::move(rr));
  }
  for (auto& [key, k] : keys) report.keys.push_back(k);
  std::sort(report.runners.begin(), report.runners.end(),
            [](const RunnerReport& a, const RunnerReport& b) {
              return std::tie(a.capabilities.key, a.runner_id) <
                     std::tie(b.capabilities.key, b.runner_id);
            });
  return report;
}

}  // namespace kiln::farm
