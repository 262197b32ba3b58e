// The model task scheduler: warm-up, gradient choice by weight x latency, dead tasks, and
// round-robin.
#include "tuner/task_scheduler.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::tuner {
namespace {

// Simulated tuning: every round of a task improves its latency by `gain` (a fraction), until
// `floor` (its best possible latency).
struct SimTask {
  double latency;
  double floor;
  double gain = 0.3;
};

std::vector<int> simulate(TaskScheduler& scheduler, std::vector<SimTask>& sims, int rounds,
                          const std::vector<int>& dead_after = {}) {
  std::vector<int> count(sims.size(), 0);
  for (int r = 0; r < rounds; ++r) {
    int i = scheduler.next();
    if (i < 0) break;
    ++count[i];
    SimTask& s = sims[i];
    s.latency = std::max(s.floor, s.latency * (1 - s.gain));
    bool alive = dead_after.empty() || count[i] < dead_after[i];
    scheduler.round_done(i, s.latency, alive);
  }
  return count;
}

TEST(TaskScheduler, WarmsUpEveryTaskOnceInOrder) {
  TaskScheduler scheduler({{1, 1e9, "a"}, {1, 1e9, "a"}, {1, 1e9, "b"}});
  std::vector<SimTask> sims = {{1e-3, 1e-4}, {1e-3, 1e-4}, {1e-3, 1e-4}};
  for (int expected = 0; expected < 3; ++expected) {
    ASSERT_EQ(scheduler.next(), expected);
    scheduler.round_done(expected, sims[expected].latency, true);
  }
}

TEST(TaskScheduler, SpendsMoreRoundsWhereWeightTimesLatencyIsLarger) {
  // Task 0 occurs 8 times and is slow; task 1 once and fast; both can improve 10x.
  TaskScheduler scheduler({{8, 2e9, "conv"}, {1, 1e8, "conv"}});
  std::vector<SimTask> sims = {{8e-3, 8e-4}, {5e-4, 5e-5}};
  std::vector<int> count = simulate(scheduler, sims, 20);
  EXPECT_GT(count[0], 2 * count[1]) << count[0] << " vs " << count[1];
  EXPECT_GE(count[1], 1);  // the warm-up round
}

TEST(TaskScheduler, NeverPicksADeadTaskAndEndsWhenAllAreDead) {
  TaskScheduler scheduler({{10, 1e9, "a"}, {1, 1e9, "a"}, {1, 1e9, "b"}});
  std::vector<SimTask> sims = {{1e-2, 1e-5}, {1e-3, 1e-5}, {1e-3, 1e-5}};
  // Task 0 (the heaviest) has a space exhausted after 2 rounds.
  std::vector<int> count = simulate(scheduler, sims, 50, {2, 1000, 1000});
  EXPECT_EQ(count[0], 2);
  EXPECT_EQ(count[1] + count[2], 48);

  TaskScheduler small({{1, 1e9, "a"}, {1, 1e9, "a"}});
  std::vector<SimTask> two = {{1e-3, 1e-4}, {1e-3, 1e-4}};
  std::vector<int> c = simulate(small, two, 100, {3, 2});
  EXPECT_EQ(c[0], 3);
  EXPECT_EQ(c[1], 2);
  EXPECT_EQ(small.next(), -1);
}

TEST(TaskScheduler, ResumedTasksSkipWarmUpAndUnknownOnesComeFirst) {
  TaskScheduler scheduler({{1, 1e9, "a"}, {1, 1e9, "a"}});
  scheduler.set_initial(0, 1e-3, true);  // resumed from the store
  EXPECT_EQ(scheduler.next(), 1);        // the task without a measurement is warmed up
}

TEST(TaskScheduler, RoundRobinTakesTurnsWhateverTheWeights) {
  TaskScheduler scheduler({{100, 1e9, "a"}, {1, 1e9, "a"}, {1, 1e9, "a"}},
                          {SchedulerStrategy::kRoundRobin});
  std::vector<SimTask> sims = {{1e-2, 1e-5}, {1e-3, 1e-5}, {1e-3, 1e-5}};
  std::vector<int> count = simulate(scheduler, sims, 9);
  EXPECT_EQ(count, (std::vector<int>{3, 3, 3}));
}

TEST(TaskScheduler, ObjectiveIsTheWeightedSumAndSaysWhenIncomplete) {
  TaskScheduler scheduler({{2, 1e9, "a"}, {3, 1e9, "a"}});
  bool complete = true;
  scheduler.set_initial(0, 1e-3, true);
  EXPECT_DOUBLE_EQ(scheduler.objective(&complete), 2e-3);
  EXPECT_FALSE(complete);
  scheduler.round_done(1, 2e-3, true);
  EXPECT_DOUBLE_EQ(scheduler.objective(&complete), 8e-3);
  EXPECT_TRUE(complete);
}

}  // namespace
}  // namespace kiln::tuner
