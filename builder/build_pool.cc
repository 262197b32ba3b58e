#include "builder/build_pool.h"

#include <poll.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "exchange/space_cache.h"

namespace kiln::builder {

namespace {

std::string encode_request(const MeasureInput& in) {
  wire::Writer w;
  in.encode(w);
  return w.bytes();
}

// A request the worker cannot build: a config that is not one of its task's space is the
// config's fault (INSTANTIATION_ERROR), anything else a bad request (COMPILE_HOST).
BuildResult rejected(const Status& why) {
  BuildResult result;
  if (why.code() == StatusCode::kInstantiation) {
    result.error = MeasureError::kInstantiationError;
    result.message = why.message();
  } else {
    result.error = MeasureError::kCompileHost;
    result.message = "builder worker: bad request: " + why.message();
  }
  return result;
}

// The worker: decodes a request, rebuilds the config from its entities in its task's space
// (cached per task) and replies with the BuildResult.
void serve(int request_fd, int response_fd) {
  ConfigSpaceCache spaces;
  wire::serve_frames(request_fd, response_fd, [&](wire::Reader& request, wire::Writer& reply) {
    Result<MeasureInput> in = MeasureInput::decode(request, spaces);
    BuildResult result = in.ok() ? build_measure_input(*in) : rejected(in.status());
    result.encode(reply);
  });
}

}  // namespace

void serve_build_worker(int request_fd, int response_fd) { serve(request_fd, response_fd); }

LocalBuildPool::LocalBuildPool(BuildPoolOptions options)
    : n_parallel_(options.n_parallel > 0
                      ? options.n_parallel
                      : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))),
      timeout_s_(options.timeout_s),
      env_(options.env ? options.env : &Env::real()) {
  workers_.resize(n_parallel_);
}

LocalBuildPool::~LocalBuildPool() = default;

Result<WorkerProcess*> LocalBuildPool::worker(size_t slot) {
  if (!workers_[slot]) {
    if (worker_binary_.empty()) {
      KILN_ASSIGN_OR_RETURN(workers_[slot], env_->spawn_worker(serve));
    } else {
      KILN_ASSIGN_OR_RETURN(workers_[slot],
                            WorkerProcess::spawn_exec({worker_binary_, "build-worker"}, {}));
    }
  }
  return workers_[slot].get();
}

std::vector<BuildResult> LocalBuildPool::build(const std::vector<MeasureInput>& inputs) {
  start(inputs);
  return finish();
}

void LocalBuildPool::fail(uint64_t input, MeasureError e, std::string message, double seconds) {
  Queued& q = queued(input);
  q.result.error = e;
  q.result.message = std::move(message);
  q.result.build_seconds = seconds;
  q.done = true;
}

double LocalBuildPool::paused_seconds() const {
  double current = paused_ ? seconds_between(pause_started_, env_->now()) : 0.0;
  return paused_total_s_ + current;
}

double LocalBuildPool::elapsed_s(const Job& job) const {
  return seconds_between(job.started, env_->now()) - (paused_seconds() - job.paused_before_s);
}

void LocalBuildPool::start(const std::vector<MeasureInput>& inputs) {
  for (const MeasureInput& in : inputs) queue_.push_back({in, BuildResult{}, false});
  batch_sizes_.push_back(inputs.size());
  if (!paused_) dispatch();  // a paused pool hands out work when it resumes
}

void LocalBuildPool::dispatch() {
  for (size_t slot = 0; slot < workers_.size() && next_ < base_ + queue_.size(); ++slot) {
    if (busy_.count(slot)) continue;
    uint64_t input = next_++;
    Result<WorkerProcess*> w = worker(slot);
    Status sent = w.ok() ? (*w)->send(encode_request(queued(input).input)) : w.status();
    if (!sent.ok()) {
      workers_[slot].reset();
      fail(input, MeasureError::kCompileHost, "cannot reach a builder worker: " + sent.message(),
           0);
      continue;
    }
    busy_[slot] = {input, env_->now(), paused_seconds()};
  }
}

bool LocalBuildPool::oldest_batch_done() const {
  if (batch_sizes_.empty()) return true;
  for (size_t i = 0; i < batch_sizes_.front(); ++i) {
    if (!queue_[i].done) return false;
  }
  return true;
}

void LocalBuildPool::serve_until(const std::function<bool()>& until_done,
                                 Clock::time_point deadline) {
  while (!until_done()) {
    dispatch();
    double until_deadline_s = seconds_between(env_->now(), deadline);
    if (until_deadline_s <= 0) return;
    if (busy_.empty()) {
      if (next_ < base_ + queue_.size()) continue;  // a failed hand-out: try the next input
      env_->sleep_for(until_deadline_s);            // nothing to build
      return;
    }
    // Wait for a reply, the earliest build deadline or the caller's deadline.
    std::vector<pollfd> fds;
    std::vector<size_t> slots;
    double wait_s = std::min(timeout_s_, until_deadline_s);
    for (const auto& [slot, job] : busy_) {
      fds.push_back({workers_[slot]->response_fd(), POLLIN, 0});
      slots.push_back(slot);
      wait_s = std::min(wait_s, timeout_s_ - elapsed_s(job));
    }
    poll(fds.data(), fds.size(), std::max(0, static_cast<int>(wait_s * 1000) + 1));
    for (size_t i = 0; i < fds.size(); ++i) {
      size_t slot = slots[i];
      Job job = busy_[slot];
      double elapsed = elapsed_s(job);
      if (fds[i].revents != 0) {
        std::string reply, why;
        if (workers_[slot]->read_ready(&reply, &why) == WorkerProcess::Outcome::kReply) {
          wire::Reader r(reply);
          Result<BuildResult> built = BuildResult::decode(r);
          if (built.ok()) {
            queued(job.input).result = std::move(built).value();
            // The worker timed itself with the wall clock, which runs on while the pool is
            // paused (SIGSTOP) for a kernel: the pool's own clock excludes those pauses.
            queued(job.input).result.build_seconds = elapsed;
            queued(job.input).done = true;
          } else {
            fail(job.input, MeasureError::kCompileHost,
                 "malformed reply from a builder worker: " + built.status().message(), elapsed);
          }
        } else {
          workers_[slot].reset();
          fail(job.input, MeasureError::kCompileHost, "the builder worker died: " + why, elapsed);
        }
        busy_.erase(slot);
      } else if (elapsed >= timeout_s_) {
        workers_[slot].reset();  // kills it; a fresh worker takes its place on the next input
        fail(job.input, MeasureError::kBuildTimeout,
             "build exceeded the " + std::to_string(timeout_s_) + " s timeout", timeout_s_);
        busy_.erase(slot);
      }
    }
  }
}

int64_t LocalBuildPool::unbuilt() const {
  int64_t n = 0;
  for (const Queued& q : queue_) n += q.done ? 0 : 1;
  return n;
}

std::vector<BuildResult> LocalBuildPool::finish() {
  if (batch_sizes_.empty()) return {};
  resume();
  serve_until([this] { return oldest_batch_done(); }, Clock::time_point::max());
  std::vector<BuildResult> results;
  for (size_t i = 0; i < batch_sizes_.front(); ++i) {
    results.push_back(std::move(queue_.front().result));
    queue_.pop_front();
    ++base_;
  }
  batch_sizes_.pop_front();
  return results;
}

void LocalBuildPool::work_for(double seconds) {
  resume();
  serve_until([] { return false; }, time_after(env_->now(), seconds));
}

void LocalBuildPool::pause() {
  if (paused_) return;
  for (const auto& [slot, job] : busy_) ::kill(workers_[slot]->pid(), SIGSTOP);
  paused_ = true;
  pause_started_ = env_->now();
}

void LocalBuildPool::resume() {
  if (!paused_) return;
  for (const auto& [slot, job] : busy_) ::kill(workers_[slot]->pid(), SIGCONT);
  paused_total_s_ += seconds_between(pause_started_, env_->now());
  paused_ = false;
}

}  // namespace kiln::builder
