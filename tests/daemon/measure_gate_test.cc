// The measure gate (daemon/measure_gate.h): one holder at a time; the highest priority waiting
// goes next, then the earliest; a waiter whose job stops gives up its place.
#include "daemon/measure_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace kiln::daemon {
namespace {

TEST(MeasureGateTest, OneHolderAtATimeHighestPriorityNext) {
  MeasureGate gate;
  gate.acquire(0);  // the test holds it while the waiters line up
  std::mutex mu;
  std::vector<int> order;
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::vector<std::thread> threads;
  auto waiter = [&](int priority, int tag) {
    gate.acquire(priority);
    if (inside.fetch_add(1) != 0) overlapped = true;
    {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(tag);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    inside.fetch_sub(1);
    gate.release();
  };
  // Arrival order: low (1), high (2), low again (3), middle (4).
  const int priorities[] = {0, 10, 0, 5};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back(waiter, priorities[i], i + 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // let it start waiting
  }
  gate.release();
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(overlapped);
  EXPECT_EQ(order, (std::vector<int>{2, 4, 1, 3}));
}

TEST(MeasureGateTest, AStoppedWaiterGivesUpAndTheNextGoes) {
  MeasureGate gate;
  ASSERT_TRUE(gate.acquire(0));
  std::stop_source cancelled;
  std::atomic<int> result{-1};
  std::thread high([&] { result = gate.acquire(10, cancelled.get_token()) ? 1 : 0; });
  std::atomic<bool> low_got{false};
  std::thread low([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // after the high one
    low_got = gate.acquire(0);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  cancelled.request_stop();  // the high one's job is cancelled while it waits
  high.join();
  EXPECT_EQ(result, 0);
  EXPECT_FALSE(low_got);  // the test still holds the gate
  gate.release();
  low.join();
  EXPECT_TRUE(low_got);
  gate.release();
}

}  // namespace
}  // namespace kiln::daemon
