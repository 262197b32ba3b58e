#include "common/job_thread.h"

#include <utility>

namespace kiln {

JobThread::JobThread(std::function<void()> on_exit)
    : on_exit_(std::move(on_exit)), thread_([this] { loop(); }) {}

JobThread::~JobThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void JobThread::post(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.push_back(std::move(job));
  cv_.notify_one();
}

void JobThread::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) break;
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
  lock.unlock();
  if (on_exit_) on_exit_();
}

}  // namespace kiln
