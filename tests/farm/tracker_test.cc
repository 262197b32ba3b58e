// The tracker's logic (farm/tracker.h) on a clock the test moves: registration, leases and their
// time limits, the per-key queue (priority, then FIFO), heartbeats and quarantine, the removal of
// silent runners, and the lease check a runner makes.
#include "farm/tracker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/warp_env.h"

namespace kiln::farm {
namespace {

using ::testing::HasSubstr;

RunnerCapabilities caps(const std::string& name, const std::string& key = "znver5-2c") {
  RunnerCapabilities c;
  c.key = key;
  c.name = name;
  c.address = "127.0.0.1:9300";
  c.target.cpu = "znver5";
  c.cores = 2;
  c.kiln_version = "0.1.0";
  return c;
}

class TrackerTest : public ::testing::Test {
 protected:
  TrackerTest()
      : tracker_(options(), &env_, [this](const std::string& l) { lines_.push_back(l); }) {}

  static TrackerOptions options() {
    TrackerOptions o;
    o.heartbeat_timeout_s = 30;
    o.max_consecutive_faults = 3;
    o.quarantine_s = 100;
    o.max_lease_s = 600;
    o.forget_after_s = 300;
    return o;
  }

  // A lease for `key`, granted at once; fails the test otherwise.
  LeaseGrant lease_now(const std::string& key = "znver5-2c", double seconds = 60) {
    Result<uint64_t> ticket = tracker_.request(key, 0, seconds, "test");
    EXPECT_TRUE(ticket.ok()) << ticket.status().message();
    std::optional<LeaseGrant> g = tracker_.take_grant(*ticket);
    EXPECT_TRUE(g.has_value());
    return g.value_or(LeaseGrant{});
  }

  const RunnerReport& runner(const FarmReport& r, const std::string& id) {
    for (const RunnerReport& rr : r.runners) {
      if (rr.runner_id == id) return rr;
    }
    ADD_FAILURE() << "no runner " << id;
    return r.runners.front();
  }

  testing::WarpEnv env_;
  std::vector<std::string> lines_;
  Tracker tracker_;
};

TEST_F(TrackerTest, RegisteredRunnerIsLeasedAndReleased) {
  ASSERT_EQ(*tracker_.register_runner(caps("a")), "a");
  FarmReport s = tracker_.status();
  ASSERT_EQ(s.keys.size(), 1u);
  EXPECT_EQ(s.keys[0].key, "znver5-2c");
  EXPECT_EQ(s.keys[0].free, 1);

  LeaseGrant g = lease_now();
  EXPECT_EQ(g.runner_id, "a");
  EXPECT_EQ(g.runner.address, "127.0.0.1:9300");
  EXPECT_NEAR(g.seconds_left, 60, 1);
  EXPECT_TRUE(tracker_.has_lease(g.lease_id));
  s = tracker_.status();
  EXPECT_EQ(s.keys[0].free, 0);
  EXPECT_EQ(s.keys[0].busy, 1);
  EXPECT_EQ(runner(s, "a").lease_client, "test");

  tracker_.release(g.lease_id);
  EXPECT_FALSE(tracker_.has_lease(g.lease_id));
  EXPECT_EQ(tracker_.status().keys[0].free, 1);
}

TEST_F(TrackerTest, NoRunnerOfTheKeyMeansTheRequestWaits) {
  ASSERT_TRUE(tracker_.register_runner(caps("a", "other-key")).ok());
  Result<uint64_t> t = tracker_.request("znver5-2c", 0, 60, "c");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(tracker_.take_grant(*t).has_value());
  FarmReport s = tracker_.status();
  ASSERT_EQ(s.keys.size(), 2u);
  EXPECT_EQ(s.keys[1].key, "znver5-2c");
  EXPECT_EQ(s.keys[1].queued, 1);
  // A runner of the key arrives: the waiting request gets it.
  ASSERT_TRUE(tracker_.register_runner(caps("b")).ok());
  std::optional<LeaseGrant> g = tracker_.take_grant(*t);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->runner_id, "b");
  // Withdrawn requests leave the queue.
  Result<uint64_t> t2 = tracker_.request("znver5-2c", 0, 60, "c");
  ASSERT_TRUE(t2.ok());
  tracker_.cancel(*t2);
  EXPECT_EQ(tracker_.status().keys[1].queued, 0);
}

TEST_F(TrackerTest, QueueIsByPriorityThenFifo) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  LeaseGrant held = lease_now();
  uint64_t low1 = *tracker_.request("znver5-2c", 0, 60, "low1");
  uint64_t high1 = *tracker_.request("znver5-2c", 5, 60, "high1");
  uint64_t low2 = *tracker_.request("znver5-2c", 0, 60, "low2");
  uint64_t high2 = *tracker_.request("znver5-2c", 5, 60, "high2");
  EXPECT_EQ(tracker_.status().keys[0].queued, 4);

  std::vector<std::string> order;
  std::string lease = held.lease_id;
  for (int i = 0; i < 4; ++i) {
    tracker_.release(lease);
    int granted = 0;
    for (uint64_t t : {low1, high1, low2, high2}) {
      if (std::optional<LeaseGrant> g = tracker_.take_grant(t)) {
        ++granted;
        lease = g->lease_id;
        order.push_back(tracker_.status().runners[0].lease_client);
      }
    }
    EXPECT_EQ(granted, 1) << "one runner, one grant per release";
  }
  EXPECT_EQ(order, (std::vector<std::string>{"high1", "high2", "low1", "low2"}));
}

TEST_F(TrackerTest, LeasesExpireAndCanBeRenewed) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  LeaseGrant g = lease_now("znver5-2c", 50);
  env_.advance(20);
  ASSERT_TRUE(tracker_.heartbeat("a") == RunnerState::kBusy);
  Result<LeaseGrant> renewed = tracker_.renew(g.lease_id, 50);  // now expires at 70
  ASSERT_TRUE(renewed.ok());
  env_.advance(20);
  tracker_.heartbeat("a");
  env_.advance(20);  // 60: past the first limit, not the renewed one
  tracker_.tick();
  EXPECT_TRUE(tracker_.has_lease(g.lease_id));
  tracker_.heartbeat("a");
  env_.advance(15);  // 75
  tracker_.tick();
  EXPECT_FALSE(tracker_.has_lease(g.lease_id));
  EXPECT_EQ(tracker_.heartbeat("a"), RunnerState::kFree);
}

TEST_F(TrackerTest, BadRequestsAreRefused) {
  Status s = tracker_.request("znver5 2c", 0, 60, "c").status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("LeaseRequest.key"));
  s = tracker_.request("k", 0, 0, "c").status();
  EXPECT_THAT(s.message(), HasSubstr("LeaseRequest.lease_seconds"));
  s = tracker_.request("k", 0, 601, "c").status();
  EXPECT_THAT(s.message(), HasSubstr("LeaseRequest.lease_seconds"));
  s = tracker_.register_runner(caps("")).status();
  EXPECT_THAT(s.message(), HasSubstr("RunnerCapabilities.name: is empty"));
}

TEST_F(TrackerTest, ConsecutiveRunnerFaultsQuarantineForAWhile) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  ASSERT_TRUE(tracker_.register_runner(caps("b")).ok());
  LeaseGrant g = lease_now();
  const std::string bad = g.runner_id;
  const std::string good = bad == "a" ? "b" : "a";
  MeasureOutcome fault{MeasureError::kRuntimeDevice, true};
  MeasureOutcome ok{MeasureError::kNoError, false};
  MeasureOutcome wrong{MeasureError::kWrongAnswer, false};  // the config's fault, not the runner's
  EXPECT_EQ(tracker_.report(g.lease_id, {fault, fault, ok, wrong, fault, fault}),
            RunnerState::kBusy);
  FarmReport s = tracker_.status();
  EXPECT_EQ(runner(s, bad).trials, 6);
  EXPECT_EQ(runner(s, bad).errors, 5);
  EXPECT_EQ(runner(s, bad).consecutive_faults, 2);
  EXPECT_TRUE(lines_.empty());

  EXPECT_EQ(tracker_.report(g.lease_id, {fault}), RunnerState::kQuarantined);
  EXPECT_FALSE(tracker_.has_lease(g.lease_id));  // the quarantine ended the lease
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_THAT(lines_[0], HasSubstr("runner " + bad + " (key znver5-2c) quarantined for 100 s"));
  EXPECT_THAT(lines_[0], HasSubstr("3 failed measurements in a row"));
  s = tracker_.status();
  EXPECT_EQ(s.keys[0].quarantined, 1);
  EXPECT_EQ(s.keys[0].free, 1);
  EXPECT_THAT(runner(s, bad).quarantine_reason, HasSubstr("3 failed measurements in a row"));
  EXPECT_NEAR(runner(s, bad).quarantine_left_s, 100, 1);

  // Only the good runner is leased while the bad one serves its time, even after it restarts.
  ASSERT_TRUE(tracker_.register_runner(caps(bad)).ok());
  LeaseGrant g2 = lease_now("znver5-2c", 600);
  EXPECT_EQ(g2.runner_id, good);
  uint64_t waiting = *tracker_.request("znver5-2c", 0, 60, "waiting");
  for (int i = 0; i < 4; ++i) {
    env_.advance(20);
    EXPECT_EQ(tracker_.heartbeat(bad), RunnerState::kQuarantined);
    tracker_.heartbeat(good);
  }
  EXPECT_FALSE(tracker_.take_grant(waiting).has_value());
  env_.advance(21);  // 101 s: served
  tracker_.heartbeat(good);
  EXPECT_EQ(tracker_.heartbeat(bad), RunnerState::kBusy);  // back, and given to the waiting one
  std::optional<LeaseGrant> g3 = tracker_.take_grant(waiting);
  ASSERT_TRUE(g3.has_value());
  EXPECT_EQ(g3->runner_id, bad);
  EXPECT_EQ(runner(tracker_.status(), bad).consecutive_faults, 0);
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_THAT(lines_[1], HasSubstr("runner " + bad + " (key znver5-2c) back in service"));
}

TEST_F(TrackerTest, MissedHeartbeatsQuarantineUntilHeardFromAgain) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  LeaseGrant g = lease_now();
  env_.advance(31);
  FarmReport s = tracker_.status();
  EXPECT_EQ(s.keys[0].quarantined, 1);
  EXPECT_THAT(runner(s, "a").quarantine_reason, HasSubstr("no heartbeat for 31 s"));
  EXPECT_NEAR(runner(s, "a").last_seen_s_ago, 31, 1);
  EXPECT_FALSE(tracker_.has_lease(g.lease_id));
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_THAT(lines_[0], HasSubstr("runner a (key znver5-2c) quarantined"));

  // Its time served but still silent: still quarantined.
  env_.advance(200);
  EXPECT_EQ(tracker_.status().keys[0].quarantined, 1);
  // Heard from again after the quarantine: free.
  EXPECT_EQ(tracker_.heartbeat("a"), RunnerState::kFree);
}

TEST_F(TrackerTest, RestartedRunnerEndsItsLeaseAndKeepsItsCounters) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  LeaseGrant g = lease_now();
  tracker_.report(g.lease_id, {{MeasureError::kNoError, false}, {MeasureError::kNoError, false}});
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  EXPECT_FALSE(tracker_.has_lease(g.lease_id));
  FarmReport s = tracker_.status();
  EXPECT_EQ(s.runners.size(), 1u);
  EXPECT_EQ(runner(s, "a").state, RunnerState::kFree);
  EXPECT_EQ(runner(s, "a").trials, 2);
}

TEST_F(TrackerTest, AGrantLostBeforeItIsTakenIsQueuedAgain) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  uint64_t t = *tracker_.request("znver5-2c", 0, 60, "c");  // granted, not yet taken
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());    // restart: the lease ends...
  std::optional<LeaseGrant> g = tracker_.take_grant(t);     // ...and the request gets it again
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(tracker_.has_lease(g->lease_id));
}

TEST_F(TrackerTest, SilentRunnerIsQuarantinedThenRemovedAndItsLeaseEnds) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  ASSERT_TRUE(tracker_.register_runner(caps("b")).ok());
  LeaseGrant g = lease_now();
  const std::string silent = g.runner_id;
  const std::string alive = silent == "a" ? "b" : "a";
  for (int i = 0; i < 31; ++i) {  // 310 s: past the heartbeat timeout and the removal
    env_.advance(10);
    tracker_.heartbeat(alive);
    if (i == 3) {
      EXPECT_EQ(runner(tracker_.status(), silent).state, RunnerState::kQuarantined);
    }
  }
  FarmReport s = tracker_.status();
  ASSERT_EQ(s.runners.size(), 1u);
  EXPECT_EQ(s.runners[0].runner_id, alive);
  EXPECT_FALSE(tracker_.has_runner(silent));
  EXPECT_FALSE(tracker_.has_lease(g.lease_id));
  EXPECT_THAT(lines_.back(),
              HasSubstr("runner " + silent + " (key znver5-2c) removed: no heartbeat"));
  // Heard from again, it registers anew, free.
  ASSERT_TRUE(tracker_.register_runner(caps(silent)).ok());
  EXPECT_EQ(runner(tracker_.status(), silent).state, RunnerState::kFree);
}

TEST_F(TrackerTest, HeldLeaseIsTheLeaseOnThatRunnerOnly) {
  ASSERT_TRUE(tracker_.register_runner(caps("a")).ok());
  ASSERT_TRUE(tracker_.register_runner(caps("b")).ok());
  LeaseGrant g = lease_now("znver5-2c", 60);
  const std::string other = g.runner_id == "a" ? "b" : "a";
  std::optional<LeaseGrant> held = tracker_.held_lease(g.lease_id, g.runner_id);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->runner_id, g.runner_id);
  EXPECT_NEAR(held->seconds_left, 60, 1);
  EXPECT_FALSE(tracker_.held_lease(g.lease_id, other).has_value());
  EXPECT_FALSE(tracker_.held_lease("lease-0-0000000000000000", g.runner_id).has_value());
  env_.advance(61);  // expired
  tracker_.heartbeat("a");
  tracker_.heartbeat("b");
  EXPECT_FALSE(tracker_.held_lease(g.lease_id, g.runner_id).has_value());
  LeaseGrant h = lease_now();
  tracker_.release(h.lease_id);  // released
  EXPECT_FALSE(tracker_.held_lease(h.lease_id, h.runner_id).has_value());
}

}  // namespace
}  // namespace kiln::farm
