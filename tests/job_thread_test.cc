#include "common/job_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {
namespace {

TEST(JobThread, RunsJobsInOrderOnOneThreadOtherThanTheCaller) {
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  {
    JobThread jobs;
    for (int i = 0; i < 20; ++i) {
      jobs.post([&, i] {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
        threads.push_back(std::this_thread::get_id());
      });
    }
  }
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
  for (const auto& id : threads) {
    EXPECT_EQ(id, threads[0]);
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(JobThread, DestructionRunsThePostedJobsThenTheExitHookOnTheThread) {
  std::vector<std::string> events;
  std::thread::id job_thread, exit_thread;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  {
    JobThread jobs([&] {
      events.push_back("exit");
      exit_thread = std::this_thread::get_id();
    });
    jobs.post([&] {
      released.wait();  // the destructor begins while this job runs
      events.push_back("first");
      job_thread = std::this_thread::get_id();
    });
    jobs.post([&] { events.push_back("second"); });
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      release.set_value();
    });
    releaser.detach();
  }
  EXPECT_EQ(events, (std::vector<std::string>{"first", "second", "exit"}));
  EXPECT_EQ(exit_thread, job_thread);
}

TEST(JobThread, TheCallerCanWaitForAJobsResult) {
  JobThread jobs;
  std::promise<int> result;
  jobs.post([&] { result.set_value(42); });
  EXPECT_EQ(result.get_future().get(), 42);
}

}  // namespace
}  // namespace kiln
