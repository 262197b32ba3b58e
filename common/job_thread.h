// JobThread: one thread that runs posted jobs in the order they were posted.
//
// For state that must live on one thread: a pool or runner whose worker processes die with the
// thread that forked them (PR_SET_PDEATHSIG fires when the forking *thread* ends), so every
// call that may start them, and their destruction, happens here.
//
// Contract:
//  - post() queues a job; jobs run one at a time, in order, on the thread.
//  - The destructor runs every job already posted, then `on_exit` (on the thread), then joins.
//    REQUIRES: no post() once destruction has begun.
//  - Declare a JobThread after the members its jobs and `on_exit` use, so it is destroyed
//    (and its thread joined) before them.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace kiln {

class JobThread {
 public:
  explicit JobThread(std::function<void()> on_exit = {});
  ~JobThread();
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  void post(std::function<void()> job);

 private:
  void loop();

  std::function<void()> on_exit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;  // last member: started once the others exist
};

}  // namespace kiln
