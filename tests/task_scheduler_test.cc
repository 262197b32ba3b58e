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
  TaskScheduler scheduler({{1, 1e9, "a", ""}, {1, 1e9, "a", ""}, {1, 1e9, "b", ""}});
  std::vector<SimTask> sims = {{1e-3, 1e-4}, {1e-3, 1e-4}, {1e-3, 1e-4}};
  for (int expected = 0; expected < 3; ++expected) {
    ASSERT_EQ(scheduler.next(), expected);
    scheduler.round_done(expected, sims[expected].latency, true);
  }
}

TEST(TaskScheduler, SpendsMoreRoundsWhereWeightTimesLatencyIsLarger) {
  // Task 0 occurs 8 times and is slow; task 1 once and fast; both can improve 10x.
  TaskScheduler scheduler({{8, 2e9, "conv", ""}, {1, 1e8, "conv", ""}});
  std::vector<SimTask> sims = {{8e-3, 8e-4}, {5e-4, 5e-5}};
  std::vector<int> count = simulate(scheduler, sims, 20);
  EXPECT_GT(count[0], 2 * count[1]) << count[0] << " vs " << count[1];
  EXPECT_GE(count[1], 1);  // the warm-up round
}

TEST(TaskScheduler, NeverPicksADeadTaskAndEndsWhenAllAreDead) {
  TaskScheduler scheduler({{10, 1e9, "a", ""}, {1, 1e9, "a", ""}, {1, 1e9, "b", ""}});
  std::vector<SimTask> sims = {{1e-2, 1e-5}, {1e-3, 1e-5}, {1e-3, 1e-5}};
  // Task 0 (the heaviest) has a space exhausted after 2 rounds.
  std::vector<int> count = simulate(scheduler, sims, 50, {2, 1000, 1000});
  EXPECT_EQ(count[0], 2);
  EXPECT_EQ(count[1] + count[2], 48);

  TaskScheduler small({{1, 1e9, "a", ""}, {1, 1e9, "a", ""}});
  std::vector<SimTask> two = {{1e-3, 1e-4}, {1e-3, 1e-4}};
  std::vector<int> c = simulate(small, two, 100, {3, 2});
  EXPECT_EQ(c[0], 3);
  EXPECT_EQ(c[1], 2);
  EXPECT_EQ(small.next(), -1);
}

TEST(TaskScheduler, ResumedTasksSkipWarmUpAndUnknownOnesComeFirst) {
  TaskScheduler scheduler({{1, 1e9, "a", ""}, {1, 1e9, "a", ""}});
  scheduler.set_initial(0, 1e-3, true);  // resumed from the store
  EXPECT_EQ(scheduler.next(), 1);        // the task without a measurement is warmed up
}

TEST(TaskScheduler, RoundRobinTakesTurnsWhateverTheWeights) {
  TaskScheduler scheduler({{100, 1e9, "a", ""}, {1, 1e9, "a", ""}, {1, 1e9, "a", ""}},
                          {SchedulerStrategy::kRoundRobin});
  std::vector<SimTask> sims = {{1e-2, 1e-5}, {1e-3, 1e-5}, {1e-3, 1e-5}};
  std::vector<int> count = simulate(scheduler, sims, 9);
  EXPECT_EQ(count, (std::vector<int>{3, 3, 3}));
}

TEST(TaskScheduler, ObjectiveIsTheWeightedSumAndSaysWhenIncomplete) {
  TaskScheduler scheduler({{2, 1e9, "a", ""}, {3, 1e9, "a", ""}});
  bool complete = true;
  scheduler.set_initial(0, 1e-3, true);
  EXPECT_DOUBLE_EQ(scheduler.objective(&complete), 2e-3);
  EXPECT_FALSE(complete);
  scheduler.round_done(1, 2e-3, true);
  EXPECT_DOUBLE_EQ(scheduler.objective(&complete), 8e-3);
  EXPECT_TRUE(complete);
}

// A direct and a Winograd conv of one layer, next to another layer: the model runs the faster
// alternative, so the objective counts the layer once, and rounds go to the alternative that can
// still lower it rather than to the one far behind.
TEST(TaskScheduler, AlternativesOfOneWorkloadCountOnceAtTheirBest) {
  TaskScheduler scheduler(
      {{2, 1e9, "direct", "conv:A"}, {2, 1e9, "winograd", "conv:A"}, {1, 1e9, "direct", "conv:B"}});
  scheduler.set_initial(0, 4e-3, true);
  scheduler.set_initial(1, 1e-3, true);
  scheduler.set_initial(2, 2e-3, true);
  bool complete = false;
  EXPECT_DOUBLE_EQ(scheduler.objective(&complete), 2 * 1e-3 + 2e-3);
  EXPECT_TRUE(complete);

  // The direct conv of A improves slowly from 4 ms and stays above Winograd's 1 ms (its floor is
  // above it): past Ansor's optimistic first guesses it cannot lower the latency, and the rounds
  // go to the others. Seen as independent tasks, it would take many more.
  std::vector<SimTask> sims = {{4e-3, 3e-3, 0.05}, {1e-3, 1e-4}, {2e-3, 2e-4}};
  std::vector<int> count = simulate(scheduler, sims, 30);
  EXPECT_LE(count[0], 2) << count[1] << " " << count[2];
  EXPECT_GT(count[1], 0);
  EXPECT_GT(count[2], 0);

  TaskScheduler independent(
      {{2, 1e9, "direct", ""}, {2, 1e9, "winograd", ""}, {1, 1e9, "direct", ""}});
  independent.set_initial(0, 4e-3, true);
  independent.set_initial(1, 1e-3, true);
  independent.set_initial(2, 2e-3, true);
  std::vector<SimTask> same = {{4e-3, 3e-3, 0.05}, {1e-3, 1e-4}, {2e-3, 2e-4}};
  EXPECT_GT(simulate(independent, same, 30)[0], 2 * std::max(1, count[0]));
}

}  // namespace
}  // namespace kiln::tuner
