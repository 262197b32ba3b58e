// The Tracker gRPC service (proto/kiln.proto): a thin layer over farm::Tracker. Each handler
// converts and validates the request (a malformed one is INVALID_ARGUMENT naming the field),
// calls the tracker under one mutex, and converts the answer; unknown runner and lease ids are
// NOT_FOUND. RequestRunner waits for a grant up to the request's wait_seconds (and the call's
// deadline), then DEADLINE_EXCEEDED.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "farm/checked_unary.h"
#include "farm/tracker.h"
#include "proto/kiln.grpc.pb.h"

namespace kiln::farm {

class TrackerService final : public CheckedUnaryService<v1::Tracker> {
 public:
  explicit TrackerService(TrackerOptions options = {}, Env* env = nullptr,
                          Tracker::Reporter reporter = {});
  ~TrackerService() override;  // stops the ticking thread

  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest*,
                        v1::RegisterReply*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatReply*) override;
  grpc::Status RequestRunner(grpc::ServerContext*, const v1::LeaseRequest*, v1::Lease*) override;
  grpc::Status RenewLease(grpc::ServerContext*, const v1::RenewLeaseRequest*, v1::Lease*) override;
  grpc::Status ReleaseLease(grpc::ServerContext*, const v1::ReleaseLeaseRequest*,
                            v1::ReleaseLeaseReply*) override;
  grpc::Status ReportResults(grpc::ServerContext*, const v1::ReportRequest*,
                             v1::ReportReply*) override;
  grpc::Status Status(grpc::ServerContext*, const v1::StatusRequest*, v1::FarmStatus*) override;
  grpc::Status CheckLease(grpc::ServerContext*, const v1::CheckLeaseRequest*, v1::Lease*) override;

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  Tracker tracker_;
  bool stopping_ = false;
  std::thread ticker_;  // applies time-driven changes (expired leases, silent runners) each 0.2 s
};

v1::RunnerState to_proto(RunnerState s);
v1::FarmStatus to_proto(const FarmReport& r);
FarmReport from_proto(const v1::FarmStatus& p);

// `kiln tracker`: serves Tracker on `listen` until SIGINT or SIGTERM. Prints
// "kiln tracker listening on HOST:PORT" (the port chosen when 0 was given) on stdout once ready,
// and quarantine reports on stderr. REQUIRES SIGINT and SIGTERM blocked in every thread (the
// caller blocks them before gRPC starts its threads; this waits for them with sigwait).
struct TrackerServerOptions {
  std::string listen = "127.0.0.1:9190";
  std::string certs_dir;  // TLS + mutual TLS or bearer token; empty: plaintext
  bool insecure = false;
  TrackerOptions tracker;
};
Status run_tracker(const TrackerServerOptions& options);

}  // namespace kiln::farm
