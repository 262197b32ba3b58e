#include "runner/remote_runner.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "farm/convert.h"
#include "farm/server_trust.h"
#include "farm/signing.h"

namespace kiln::runner {

namespace {

std::chrono::system_clock::time_point deadline_after(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::string describe(const grpc::Status& s) {
  return std::to_string(static_cast<int>(s.error_code())) + " " + s.error_message();
}

// The batch shared by the threads that measure it on leased runners.
struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> queue;  // configs waiting for a runner
  int in_flight = 0;         // configs being measured now
  int alive = 0;             // runner threads still taking work
  std::vector<std::optional<MeasureResult>> results;
  std::vector<int> lost;  // runners lost under each config

  // REQUIRES mu held. The config goes back to the queue, or is given up after max_attempts.
  void give_back(size_t i, const std::string& why, int max_attempts) {
    if (++lost[i] >= max_attempts) {
      MeasureResult m = MeasureResult::failure(MeasureError::kRuntimeDevice, why);
      m.runner_lost = true;
      results[i] = std::move(m);
    } else {
      queue.push_back(i);
    }
  }
};

}  // namespace

Result<std::unique_ptr<RemoteRunner>> RemoteRunner::create(RemoteRunnerOptions options) {
  KILN_RETURN_IF_ERROR(farm::check_name("--key", options.key));
  if (options.tracker.empty()) return InvalidArgument("--tracker: empty address");
  if (options.signing_key.size() < 32) {
    return InvalidArgument("the farm's signing key is missing or shorter than 32 characters");
  }
  if (options.chunk < 1 || options.max_attempts < 1) {
    return InvalidArgument("remote runner: chunk and max_attempts must be at least 1");
  }
  KILN_ASSIGN_OR_RETURN(auto creds, farm::client_credentials(options.auth));
  return std::unique_ptr<RemoteRunner>(new RemoteRunner(std::move(options), std::move(creds)));
}

RemoteRunner::RemoteRunner(RemoteRunnerOptions options,
                           std::shared_ptr<grpc::ChannelCredentials> creds)
    : Runner(options.measure.env), options_(std::move(options)), creds_(std::move(creds)) {
  tracker_ = v1::Tracker::NewStub(grpc::CreateChannel(options_.tracker, creds_));
}

std::vector<MeasureResult> RemoteRunner::run(const std::vector<MeasureInput>& inputs,
                                             const std::vector<BuildResult>& builds) {
  const RunnerOptions& ro = options_.measure;
  lost_.clear();
  Shared shared;
  shared.results.resize(inputs.size());
  shared.lost.assign(inputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (builds[i].error != MeasureError::kNoError) {
      shared.results[i] = MeasureResult::of_failed_build(builds[i]);
    } else {
      shared.queue.push_back(i);
    }
  }
  farm::MeasureOptions fo;
  fo.time = ro.measure.time;
  fo.input_seed = ro.measure.input_seed;
  fo.tolerance = ro.measure.tolerance;
  fo.timeout_s = ro.timeout_s;
  fo.cooldown_interval_s = ro.cooldown_interval_s;
  fo.threads = ro.threads;
  const v1::MeasureOptions wire_options = farm::to_proto(fo);
  // A chunk's time: each config's run limit and cooldown, plus the task's reference and slack.
  const double chunk_s = options_.chunk * (ro.timeout_s + ro.cooldown_interval_s + 2) + 120;

  // Measures configs `idx` on a runner; their results, or why the runner failed.
  auto measure_chunk = [&](v1::Runner::Stub& stub, const std::string& lease_id,
                           const std::vector<size_t>& idx) -> Result<std::vector<MeasureResult>> {
    v1::ArtifactQuery query;
    std::set<std::string> asked;
    for (size_t i : idx) {
      if (asked.insert(builds[i].artifact_sha256).second) {
        query.add_sha256(builds[i].artifact_sha256);
      }
    }
    v1::ArtifactQueryReply missing_reply;
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(deadline_after(30));
      grpc::Status s = stub.MissingArtifacts(&ctx, query, &missing_reply);
      if (!s.ok()) return IoError("MissingArtifacts: " + describe(s));
    }
    std::set<std::string> missing(missing_reply.missing().begin(), missing_reply.missing().end());
    for (int attempt = 0; attempt < 2; ++attempt) {
      v1::MeasureRequest request;
      request.set_lease_id(lease_id);
      *request.mutable_options() = wire_options;
      std::set<std::string> sent;
      for (size_t i : idx) {
        v1::MeasureItem* item = request.add_items();
        *item->mutable_input() = farm::to_proto(inputs[i]);
        *item->mutable_build() = farm::to_proto(builds[i]);
        const std::string& digest = builds[i].artifact_sha256;
        // Each missing artifact once; the runner caches it for the items after it.
        if (!missing.count(digest) || !sent.insert(digest).second) {
          item->mutable_build()->clear_artifact();
        }
        item->set_signature(farm::sign_digest(options_.signing_key, digest));
      }
      v1::MeasureReply reply;
      grpc::ClientContext ctx;
      ctx.set_deadline(deadline_after(chunk_s));
      grpc::Status s = stub.Measure(&ctx, request, &reply);
      if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION && attempt == 0) {
        for (size_t i : idx) missing.insert(builds[i].artifact_sha256);  // evicted: send all
        continue;
      }
      if (!s.ok()) return IoError("Measure: " + describe(s));
      if (reply.results_size() != static_cast<int>(idx.size())) {
        return IoError("Measure: " + std::to_string(reply.results_size()) + " results for " +
                       std::to_string(idx.size()) + " items");
      }
      std::vector<MeasureResult> out;
      for (int k = 0; k < reply.results_size(); ++k) {
        Result<MeasureResult> m =
            farm::from_proto(reply.results(k), "MeasureReply.results[" + std::to_string(k) + "]");
        if (!m.ok()) return IoError("Measure: " + m.status().message());
        m->build_seconds = builds[idx[k]].build_seconds;
        out.push_back(std::move(m).value());
      }
      return out;
    }
    return IoError("Measure: artifacts missing on the runner after an upload");
  };

  auto report = [&](const std::string& lease_id, const std::vector<v1::MeasureOutcome>& outcomes) {
    v1::ReportRequest request;
    request.set_lease_id(lease_id);
    for (const auto& o : outcomes) *request.add_outcomes() = o;
    v1::ReportReply reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline_after(10));
    (void)tracker_->ReportResults(&ctx, request, &reply);  // the tracker may have ended the lease
  };

  // One leased runner: takes chunks from the queue until the batch is done or the runner fails.
  auto work = [&](v1::Lease lease) {
    const std::string name = lease.runner().runner_id();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(512 << 20);
    args.SetMaxSendMessageSize(512 << 20);
    // A cut network shows within seconds, not at the call's deadline.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    auto stub = v1::Runner::NewStub(
        grpc::CreateCustomChannel(lease.runner().capabilities().address(), creds_, args));
    std::unique_lock<std::mutex> lock(shared.mu);
    while (true) {
      if (shared.queue.empty()) {
        if (shared.in_flight == 0) break;
        shared.cv.wait(lock);
        continue;
      }
      // An even share of what is left among the runners still working, up to a chunk: a batch
      // smaller than chunks times runners still reaches every runner.
      const size_t runners = static_cast<size_t>(std::max(1, shared.alive));
      const size_t share = (shared.queue.size() + runners - 1) / runners;
      const size_t take = std::clamp<size_t>(share, 1, options_.chunk);
      std::vector<size_t> idx;
      while (!shared.queue.empty() && idx.size() < take) {
        idx.push_back(shared.queue.front());
        shared.queue.pop_front();
      }
      shared.in_flight += static_cast<int>(idx.size());
      lock.unlock();
      {
        v1::RenewLeaseRequest renew;
        renew.set_lease_id(lease.lease_id());
        renew.set_lease_seconds(chunk_s + 60);
        v1::Lease renewed;
        grpc::ClientContext ctx;
        ctx.set_deadline(deadline_after(10));
        (void)tracker_->RenewLease(&ctx, renew, &renewed);
      }
      Result<std::vector<MeasureResult>> got = measure_chunk(*stub, lease.lease_id(), idx);
      std::vector<v1::MeasureOutcome> outcomes;
      bool failed = !got.ok();
      lock.lock();
      shared.in_flight -= static_cast<int>(idx.size());
      if (failed) {
        const std::string why = "runner " + name + " was lost: " + got.status().message();
        for (size_t i : idx) shared.give_back(i, why, options_.max_attempts);
        v1::MeasureOutcome o;
        o.set_error_no(v1::RUNTIME_DEVICE);
        o.set_runner_fault(true);
        outcomes.push_back(o);
      } else {
        for (size_t k = 0; k < idx.size(); ++k) {
          MeasureResult& m = (*got)[k];
          v1::MeasureOutcome o;
          o.set_error_no(static_cast<v1::MeasureErrorNo>(m.error));
          o.set_runner_fault(m.runner_lost);
          outcomes.push_back(o);
          if (m.runner_lost) {
            failed = true;  // its runner process is not working: leave it for this batch
            shared.give_back(idx[k], "runner " + name + ": " + m.message, options_.max_attempts);
          } else {
            shared.results[idx[k]] = std::move(m);
          }
        }
      }
      shared.cv.notify_all();
      lock.unlock();
      report(lease.lease_id(), outcomes);
      lock.lock();
      if (failed) break;
    }
    lock.unlock();
    // Released as soon as it is not needed: a runner that failed may be leased again by the
    // batch (a restarted runner process usually works; a dead runner fails fast, and each config
    // is given up after max_attempts losses), and the tracker quarantines a runner that keeps
    // failing.
    // A lease left held keeps its runner from the next batch until it expires (minutes): a
    // release that did not reach a slow tracker is sent again.
    v1::ReleaseLeaseRequest release;
    release.set_lease_id(lease.lease_id());
    for (int attempt = 0; attempt < 3; ++attempt) {
      v1::ReleaseLeaseReply released;
      grpc::ClientContext ctx;
      ctx.set_deadline(deadline_after(10));
      grpc::Status s = tracker_->ReleaseLease(&ctx, release, &released);
      if (s.ok() || s.error_code() == grpc::StatusCode::NOT_FOUND) break;
    }
    lock.lock();
    --shared.alive;
    shared.cv.notify_all();
  };

  std::vector<std::thread> threads;
  auto lease_one = [&](double wait_s) -> Result<v1::Lease> {
    v1::LeaseRequest request;
    request.set_key(options_.key);
    request.set_priority(options_.priority);
    request.set_lease_seconds(chunk_s + 60);
    request.set_wait_seconds(wait_s);
    request.set_client(options_.client);
    v1::Lease lease;
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline_after(wait_s + 10));
    grpc::Status s = tracker_->RequestRunner(&ctx, request, &lease);
    // DEADLINE_EXCEEDED is the tracker's answer when no runner came free within the wait; any
    // other failure is the tracker's own (down, cut off, or refusing this client).
    if (!s.ok() && s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      std::string why = farm::untrusted_server_reason(s, options_.tracker, options_.auth);
      lost_ =
          "the tracker at " + options_.tracker + " is lost: " + (why.empty() ? describe(s) : why);
      return IoError(lost_);
    }
    if (!s.ok()) {
      return IoError("no runner of key " + options_.key + " from the tracker at " +
                     options_.tracker + ": " + describe(s));
    }
    return lease;
  };

  std::unique_lock<std::mutex> lock(shared.mu);
  while (!(shared.queue.empty() && shared.in_flight == 0)) {
    if (shared.alive > 0) {
      shared.cv.wait(lock);
      continue;
    }
    // No runner is working on the batch (at the start, or all were lost): lease some, up to one
    // per config, then start them all at once so that they share the batch evenly.
    const size_t wanted = shared.queue.size();
    lock.unlock();
    Result<v1::Lease> first = lease_one(options_.wait_s);
    if (first.ok()) {
      std::vector<v1::Lease> leases = {std::move(first).value()};
      while (leases.size() < wanted) {
        Result<v1::Lease> more = lease_one(0);
        if (!more.ok()) break;
        leases.push_back(std::move(more).value());
      }
      std::lock_guard<std::mutex> started(shared.mu);
      shared.alive += static_cast<int>(leases.size());
      for (v1::Lease& l : leases) threads.emplace_back(work, std::move(l));
    }
    lock.lock();
    if (!first.ok()) {
      for (size_t i : shared.queue) {
        MeasureResult m =
            MeasureResult::failure(MeasureError::kRuntimeDevice, first.status().message());
        m.runner_lost = true;
        shared.results[i] = std::move(m);
      }
      shared.queue.clear();
    }
  }
  lock.unlock();
  for (std::thread& t : threads) t.join();
  std::vector<MeasureResult> out;
  for (auto& r : shared.results) out.push_back(std::move(*r));
  return out;
}

}  // namespace kiln::runner
