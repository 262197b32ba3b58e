#include "farm/tracker_service.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "farm/message_size.h"
#include "farm/proto_fields.h"
#include "farm/security.h"
#include "farm/server_start.h"

namespace kiln::farm {

namespace {

grpc::Status to_grpc(const kiln::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kInstantiation:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case StatusCode::kUnimplemented:
      code = grpc::StatusCode::UNIMPLEMENTED;
      break;
    default:
      break;
  }
  return grpc::Status(code, s.message());
}

grpc::Status not_found(const std::string& what) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND, what);
}

void fill(const LeaseGrant& g, v1::Lease* out) {
  out->set_lease_id(g.lease_id);
  out->mutable_runner()->set_runner_id(g.runner_id);
  *out->mutable_runner()->mutable_capabilities() = to_proto(g.runner);
  out->set_seconds_left(g.seconds_left);
}

}  // namespace

v1::RunnerState to_proto(RunnerState s) {
  switch (s) {
    case RunnerState::kFree:
      return v1::FREE;
    case RunnerState::kBusy:
      return v1::BUSY;
    case RunnerState::kQuarantined:
      return v1::QUARANTINED;
  }
  return v1::RUNNER_STATE_UNSPECIFIED;
}

v1::FarmStatus to_proto(const FarmReport& r) {
  v1::FarmStatus p;
  for (const KeyReport& k : r.keys) {
    copy_fields(k, p.add_keys());
  }
  for (const RunnerReport& rr : r.runners) {
    v1::RunnerStatus* rs = p.add_runners();
    copy_fields(rr, rs);
    *rs->mutable_capabilities() = to_proto(rr.capabilities);
    rs->set_state(to_proto(rr.state));
  }
  return p;
}

FarmReport from_proto(const v1::FarmStatus& p) {
  FarmReport r;
  for (const v1::KeyStatus& ks : p.keys()) copy_fields(ks, &r.keys.emplace_back());
  for (const v1::RunnerStatus& rs : p.runners()) {
    RunnerReport rr;
    copy_fields(rs, &rr);
    // The tracker's own report, shown rather than trusted: read as it is, not validated as a
    // runner's registration is.
    copy_fields(rs.capabilities(), &rr.capabilities);
    copy_fields(rs.capabilities().target(), &rr.capabilities.target);
    rr.state = rs.state() == v1::BUSY          ? RunnerState::kBusy
               : rs.state() == v1::QUARANTINED ? RunnerState::kQuarantined
                                               : RunnerState::kFree;
    r.runners.push_back(std::move(rr));
  }
  return r;
}

TrackerService::TrackerService(TrackerOptions options, Env* env, Tracker::Reporter reporter)
    : tracker_(options, env, std::move(reporter)) {
  check_unary("Register", &TrackerService::Register);
  check_unary("Heartbeat", &TrackerService::Heartbeat);
  check_unary("RequestRunner", &TrackerService::RequestRunner);
  check_unary("RenewLease", &TrackerService::RenewLease);
  check_unary("ReleaseLease", &TrackerService::ReleaseLease);
  check_unary("ReportResults", &TrackerService::ReportResults);
  check_unary("Status", &TrackerService::Status);
  check_unary("CheckLease", &TrackerService::CheckLease);
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      changed_.wait_for(lock, std::chrono::milliseconds(200));
      if (stopping_) break;
      tracker_.tick();
      changed_.notify_all();
    }
  });
}

TrackerService::~TrackerService() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  ticker_.join();
}

grpc::Status TrackerService::Register(grpc::ServerContext*, const v1::RegisterRequest* req,
                                      v1::RegisterReply* reply) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "RegisterRequest");
      !s.ok())
    return s;
  if (!req->has_capabilities()) {
    return to_grpc(InvalidArgument("RegisterRequest.capabilities: is missing"));
  }
  Result<RunnerCapabilities> caps = from_proto(req->capabilities(), "RegisterRequest.capabilities");
  if (!caps.ok()) return to_grpc(caps.status());
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::string> id = tracker_.register_runner(*caps);
  if (!id.ok()) return to_grpc(id.status());
  reply->set_runner_id(*id);
  reply->set_heartbeat_interval_s(tracker_.options().heartbeat_interval_s);
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status TrackerService::Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* req,
                                       v1::HeartbeatReply* reply) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "HeartbeatRequest");
      !s.ok())
    return s;
  std::lock_guard<std::mutex> lock(mu_);
  if (!tracker_.has_runner(req->runner_id())) {
    return not_found("HeartbeatRequest.runner_id: unknown runner '" + req->runner_id() +
                     "'; register again");
  }
  reply->set_state(to_proto(tracker_.heartbeat(req->runner_id())));
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status TrackerService::RequestRunner(grpc::ServerContext* context,
                                           const v1::LeaseRequest* req, v1::Lease* reply) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "LeaseRequest"); !s.ok())
    return s;
  if (!std::isfinite(req->wait_seconds()) || req->wait_seconds() < 0 ||
      req->wait_seconds() > 24 * 3600) {
    return to_grpc(InvalidArgument("LeaseRequest.wait_seconds: must be in [0, 86400], got " +
                                   std::to_string(req->wait_seconds())));
  }
  std::unique_lock<std::mutex> lock(mu_);
  Result<uint64_t> ticket =
      tracker_.request(req->key(), req->priority(), req->lease_seconds(), req->client());
  if (!ticket.ok()) return to_grpc(ticket.status());
  changed_.notify_all();
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(req->wait_seconds()));
  while (true) {
    if (std::optional<LeaseGrant> g = tracker_.take_grant(*ticket)) {
      fill(*g, reply);
      return grpc::Status::OK;
    }
    if (stopping_ || context->IsCancelled() || std::chrono::steady_clock::now() >= give_up) {
      tracker_.cancel(*ticket);
      changed_.notify_all();
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                          "no runner of key '" + req->key() + "' came free within " +
                              std::to_string(req->wait_seconds()) + " s");
    }
    changed_.wait_until(
        lock, std::min(give_up, std::chrono::steady_clock::now() + std::chrono::milliseconds(200)));
  }
}

grpc::Status TrackerService::RenewLease(grpc::ServerContext*, const v1::RenewLeaseRequest* req,
                                        v1::Lease* reply) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "RenewLeaseRequest");
      !s.ok())
    return s;
  std::lock_guard<std::mutex> lock(mu_);
  tracker_.tick();
  if (!tracker_.has_lease(req->lease_id())) {
    return not_found("RenewLeaseRequest.lease_id: unknown or expired lease '" + req->lease_id() +
                     "'");
  }
  Result<LeaseGrant> g = tracker_.renew(req->lease_id(), req->lease_seconds());
  if (!g.ok()) return to_grpc(g.status());
  fill(*g, reply);
  return grpc::Status::OK;
}

grpc::Status TrackerService::ReleaseLease(grpc::ServerContext*, const v1::ReleaseLeaseRequest* req,
                                          v1::ReleaseLeaseReply*) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "ReleaseLeaseRequest");
      !s.ok())
    return s;
  std::lock_guard<std::mutex> lock(mu_);
  tracker_.tick();
  if (!tracker_.has_lease(req->lease_id())) {
    return not_found("ReleaseLeaseRequest.lease_id: unknown or expired lease '" + req->lease_id() +
                     "'");
  }
  tracker_.release(req->lease_id());
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status TrackerService::ReportResults(grpc::ServerContext*, const v1::ReportRequest* req,
                                           v1::ReportReply* reply) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "ReportRequest"); !s.ok())
    return s;
  std::vector<MeasureOutcome> outcomes;
  for (int i = 0; i < req->outcomes_size(); ++i) {
    Result<MeasureError> e = measure_error_from_proto(
        req->outcomes(i).error_no(), "ReportRequest.outcomes[" + std::to_string(i) + "].error_no");
    if (!e.ok()) return to_grpc(e.status());
    outcomes.push_back(MeasureOutcome{*e, req->outcomes(i).runner_fault()});
  }
  std::lock_guard<std::mutex> lock(mu_);
  tracker_.tick();
  if (!tracker_.has_lease(req->lease_id())) {
    return not_found("ReportRequest.lease_id: unknown or expired lease '" + req->lease_id() + "'");
  }
  reply->set_state(to_proto(tracker_.report(req->lease_id(), outcomes)));
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status TrackerService::Status(grpc::ServerContext*, const v1::StatusRequest* req,
                                    v1::FarmStatus* reply) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "StatusRequest"); !s.ok())
    return s;
  std::lock_guard<std::mutex> lock(mu_);
  *reply = to_proto(tracker_.status());
  return grpc::Status::OK;
}

grpc::Status TrackerService::CheckLease(grpc::ServerContext*, const v1::CheckLeaseRequest* req,
                                        v1::Lease* reply) {
  if (grpc::Status s = check_request_size(*req, kMaxTrackerRequestBytes, "CheckLeaseRequest");
      !s.ok())
    return s;
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<LeaseGrant> g = tracker_.held_lease(req->lease_id(), req->runner_id());
  if (!g) {
    return not_found("CheckLeaseRequest.lease_id: '" + req->lease_id() +
                     "' is not a lease held on runner '" + req->runner_id() + "' now");
  }
  fill(*g, reply);
  return grpc::Status::OK;
}

Status run_tracker(const TrackerServerOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds,
                        listen_credentials(options.listen, options.certs_dir, options.insecure));

  TrackerService service(options.tracker, nullptr,
                         [](const std::string& line) { spdlog::info("{}", line); });
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(transport_limit(kMaxTrackerRequestBytes));
  int port = 0;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server,
                        start_server(builder, options.listen, creds, &port));
  std::printf("kiln tracker listening on %s (%s)\n", bound_address(options.listen, port).c_str(),
              security_text(!options.certs_dir.empty()));
  std::fflush(stdout);

  spdlog::info("stopping ({})", wait_for_stop_signal());
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return Status::Ok();
}

}  // namespace kiln::farm
