#include "runner/runner_service.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <future>
#include <thread>

#include "common/sha256.h"
#include "exchange/host_target.h"
#include "farm/convert.h"
#include "farm/message_size.h"
#include "farm/server_start.h"
#include "farm/server_trust.h"
#include "farm/signing.h"
#include "runtime/elf_machine.h"

namespace kiln::runner {

namespace {

bool is_digest(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

grpc::Status invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

}  // namespace

RunnerService::RunnerService(RunnerServiceOptions options) : options_(std::move(options)) {
  check_unary("Measure", &RunnerService::Measure);
  check_unary("MissingArtifacts", &RunnerService::MissingArtifacts);
}

grpc::Status RunnerService::check_lease(const std::string& lease_id) {
  if (lease_id.empty()) {
    return invalid("MeasureRequest.lease_id: missing; lease this runner from the tracker first");
  }
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(lease_mu_);
    std::erase_if(confirmed_leases_, [&](const auto& l) { return l.second <= now; });
    if (confirmed_leases_.count(lease_id)) return grpc::Status::OK;
  }
  double seconds_left = 0;
  grpc::Status s = options_.check_lease(lease_id, &seconds_left);
  if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "MeasureRequest.lease_id: '" + lease_id +
                            "' is not a lease the tracker holds on this runner now (released, "
                            "expired or another runner's); nothing was loaded");
  }
  if (!s.ok()) {
    return grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        "cannot check MeasureRequest.lease_id with the tracker: " + s.error_message());
  }
  std::lock_guard<std::mutex> lock(lease_mu_);
  confirmed_leases_[lease_id] =
      now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(std::min(seconds_left, kLeaseRecheckS)));
  return grpc::Status::OK;
}

bool RunnerService::cached(const std::string& digest) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  return artifacts_.count(digest) > 0;
}

void RunnerService::cache(const std::string& digest, const std::string& bytes) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (artifacts_.count(digest) || bytes.size() > options_.artifact_cache_bytes) return;
  while (cache_bytes_ + bytes.size() > options_.artifact_cache_bytes && !cache_order_.empty()) {
    auto it = artifacts_.find(cache_order_.front());
    cache_bytes_ -= it->second.size();
    artifacts_.erase(it);
    cache_order_.pop_front();
  }
  artifacts_.emplace(digest, bytes);
  cache_order_.push_back(digest);
  cache_bytes_ += bytes.size();
}

LocalRunner& RunnerService::local_runner(const RunnerOptions& o) {
  const RunnerOptions& l = local_options_;
  bool same = local_ && l.measure.time.number == o.measure.time.number &&
              l.measure.time.repeat == o.measure.time.repeat &&
              l.measure.time.min_repeat_ms == o.measure.time.min_repeat_ms &&
              l.measure.time.enable_cpu_cache_flush == o.measure.time.enable_cpu_cache_flush &&
              l.measure.input_seed == o.measure.input_seed &&
              l.measure.tolerance == o.measure.tolerance && l.timeout_s == o.timeout_s &&
              l.cooldown_interval_s == o.cooldown_interval_s && l.threads == o.threads;
  if (!same) {
    local_ = std::make_unique<LocalRunner>(o);
    local_options_ = o;
  }
  return *local_;
}

grpc::Status RunnerService::MissingArtifacts(grpc::ServerContext*, const v1::ArtifactQuery* request,
                                             v1::ArtifactQueryReply* reply) {
  if (grpc::Status s =
          farm::check_request_size(*request, farm::kMaxRunnerRequestBytes, "ArtifactQuery");
      !s.ok()) {
    return s;
  }
  for (int i = 0; i < request->sha256_size(); ++i) {
    const std::string& d = request->sha256(i);
    if (!is_digest(d)) {
      return invalid("ArtifactQuery.sha256[" + std::to_string(i) +
                     "]: is not 64 lowercase hex digits");
    }
    if (!cached(d)) reply->add_missing(d);
  }
  return grpc::Status::OK;
}

grpc::Status RunnerService::Measure(grpc::ServerContext* context, const v1::MeasureRequest* request,
                                    v1::MeasureReply* reply) {
  if (grpc::Status s =
          farm::check_request_size(*request, farm::kMaxRunnerRequestBytes, "MeasureRequest");
      !s.ok()) {
    return s;
  }
  if (grpc::Status s = check_lease(request->lease_id()); !s.ok()) return s;
  Result<farm::MeasureOptions> mo = farm::from_proto(request->options(), "MeasureRequest.options");
  if (!mo.ok()) return invalid(mo.status().message());
  RunnerOptions ro;
  ro.measure.time = mo->time;
  ro.measure.input_seed = mo->input_seed;
  ro.measure.tolerance = mo->tolerance;
  ro.timeout_s = mo->timeout_s;
  ro.cooldown_interval_s = mo->cooldown_interval_s;
  ro.threads = mo->threads > 0 ? mo->threads : options_.cores;
  ro.worker_binary = options_.worker_binary;
  ro.exec_prefix = options_.exec_prefix;
  if (options_.emulated) {
    ro.measure.time.number = ro.measure.time.repeat = 1;
    ro.measure.time.min_repeat_ms = 0;
    ro.measure.time.enable_cpu_cache_flush = false;
    ro.cooldown_interval_s = 0;
  }
  ro.max_memory_bytes = options_.max_memory_bytes;
  ro.max_cpu_s_per_config = options_.max_cpu_s_per_config;
  ro.scratch_parent = options_.scratch_parent;

  // Signatures first, for every item: nothing of a request with one bad signature is loaded.
  for (int i = 0; i < request->items_size(); ++i) {
    const v1::MeasureItem& item = request->items(i);
    const std::string field = "MeasureRequest.items[" + std::to_string(i) + "]";
    if (item.build().error_no() != v1::NO_ERROR) continue;
    if (!is_digest(item.build().sha256())) {
      return invalid(field + ".build.sha256: is not 64 lowercase hex digits");
    }
    if (item.signature().empty()) {
      return grpc::Status(
          grpc::StatusCode::PERMISSION_DENIED,
          field + ".signature: missing; this runner executes only signed artifacts");
    }
    if (!farm::signature_matches(options_.signing_key, item.build().sha256(), item.signature())) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          field +
                              ".signature: does not match the artifact's digest under the "
                              "farm's key; nothing was loaded");
    }
    // The signature vouches for the digest; bytes that do not hash to it were tampered with.
    if (!item.build().artifact().empty() &&
        sha256_hex(item.build().artifact()) != item.build().sha256()) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          field + ".build.artifact: does not hash to its signed sha256 " +
                              item.build().sha256() + "; nothing was loaded");
    }
  }

  std::lock_guard<std::mutex> lock(measure_mu_);
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
  std::vector<std::optional<MeasureResult>> fixed(request->items_size());
  for (int i = 0; i < request->items_size(); ++i) {
    const v1::MeasureItem& item = request->items(i);
    const std::string field = "MeasureRequest.items[" + std::to_string(i) + "]";
    Result<MeasureInput> in = farm::from_proto(item.input(), spaces_, field + ".input");
    if (!in.ok()) {
      if (in.status().code() != StatusCode::kInstantiation) return invalid(in.status().message());
      fixed[i] = MeasureResult::failure(MeasureError::kInstantiationError, in.status().message());
    }
    v1::BuildResult wire_build = item.build();
    if (wire_build.error_no() == v1::NO_ERROR && wire_build.artifact().empty()) {
      std::lock_guard<std::mutex> cache_lock(cache_mu_);
      auto it = artifacts_.find(wire_build.sha256());
      if (it == artifacts_.end()) {
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            field + ".build.artifact: empty and " + wire_build.sha256() +
                                " is not cached here; send the artifact");
      }
      wire_build.set_artifact(it->second);
    }
    Result<BuildResult> b = farm::from_proto(wire_build, field + ".build");
    if (!b.ok()) return invalid(b.status().message());
    if (b->error == MeasureError::kNoError && !fixed[i]) {
      // A cross-compiled artifact (an aarch64 kernel sent to this x86-64 runner): refused before
      // any child loads it, with the reason recorded against the config.
      if (Status runs = check_runs_here(b->shared_object, b->artifact_sha256); !runs.ok()) {
        fixed[i] = MeasureResult::failure(MeasureError::kRuntimeDevice,
                                          "this runner cannot run it: " + runs.message());
      }
    }
    if (b->error == MeasureError::kNoError && b->verify_digest().ok()) {
      cache(b->artifact_sha256, b->shared_object);
    }
    inputs.push_back(in.ok() ? std::move(in).value() : MeasureInput{});
    builds.push_back(std::move(b).value());
  }

  // On the measuring thread, which owns the runner processes (see measurer_).
  std::promise<bool> done;
  measurer_.post([&] {
    LocalRunner& local = local_runner(ro);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (context->IsCancelled()) {
        done.set_value(false);
        return;
      }
      MeasureResult m = fixed[i] ? *fixed[i] : local.run({inputs[i]}, {builds[i]})[0];
      m.emulated = options_.emulated && m.error == MeasureError::kNoError;
      *reply->add_results() = farm::to_proto(m);
    }
    done.set_value(true);
  });
  if (!done.get_future().get()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
  return grpc::Status::OK;
}

RunnerService::~RunnerService() = default;

namespace {

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  std::string out;
  for (char c : std::string(buf)) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '-';
  }
  return out.empty() ? "host" : out;
}

}  // namespace

Status run_runner(RunnerServerOptions o) {
  KILN_RETURN_IF_ERROR(farm::check_name("--key", o.key));
  if (o.name.empty()) o.name = o.key + "-" + hostname() + "-" + std::to_string(getpid());
  if (o.name.size() > 64) o.name = o.name.substr(o.name.size() - 64);
  KILN_RETURN_IF_ERROR(farm::check_name("--name", o.name));
  const bool secured = !o.auth.certs_dir.empty();
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> server_creds,
                        farm::listen_credentials(o.listen, o.auth.certs_dir, o.auth.insecure));
  std::string key_file = o.signing_key_file;
  if (key_file.empty()) key_file = !o.auth.token_file.empty() ? o.auth.token_file : "";
  if (key_file.empty() && secured) key_file = farm::cert_files(o.auth.certs_dir).token;
  if (key_file.empty()) {
    return InvalidArgument(
        "a runner executes only artifacts signed with the farm's key: pass --certs DIR (its "
        "token), --token-file F or --signing-key F");
  }
  KILN_ASSIGN_OR_RETURN(o.service.signing_key, farm::read_signing_key(key_file));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> client_creds,
                        farm::client_credentials(o.auth));
  if (o.service.scratch_parent.empty()) {
    std::error_code ec;
    o.service.scratch_parent = std::filesystem::temp_directory_path(ec).string();
    if (ec) o.service.scratch_parent = "/tmp";
  }

  std::shared_ptr<v1::Tracker::Stub> tracker =
      v1::Tracker::NewStub(grpc::CreateChannel(o.tracker, client_creds));
  auto deadline = [](double s) {
    return std::chrono::system_clock::now() +
           std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
  };
  o.service.check_lease = [tracker, runner_id = o.name, deadline](const std::string& lease_id,
                                                                  double* seconds_left) {
    v1::CheckLeaseRequest request;
    request.set_lease_id(lease_id);
    request.set_runner_id(runner_id);
    v1::Lease lease;
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline(30));  // a loaded tracker is slow, not a reason to refuse
    grpc::Status s = tracker->CheckLease(&ctx, request, &lease);
    *seconds_left = lease.seconds_left();
    return s;
  };

  RunnerService service(o.service);
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(farm::transport_limit(farm::kMaxRunnerRequestBytes));
  // Clients ping every few seconds to notice a cut network during a long Measure call.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 4000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  int port = 0;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server,
                        farm::start_server(builder, o.listen, server_creds, &port));
  const std::string address = farm::bound_address(o.listen, port);

  v1::RegisterRequest registration;
  farm::RunnerCapabilities caps;
  caps.key = o.key;
  caps.name = o.name;
  caps.address = address;
  caps.target = o.target.triple.empty() ? host_target_without_llvm() : o.target;
  caps.cores = o.service.cores;
  caps.kiln_version = o.kiln_version;
  *registration.mutable_capabilities() = farm::to_proto(caps);
  auto register_once = [&](v1::RegisterReply* reply, double wait_s) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline(wait_s));
    ctx.set_wait_for_ready(true);  // a tracker still starting is waited for, not an error
    return tracker->Register(&ctx, registration, reply);
  };
  // A tracker whose certificate this runner's CA does not accept (another farm's certificates)
  // is refused at once: waiting does not change it, and gRPC would show only UNAVAILABLE.
  // Asked before the first attempt too, since one that waits for the tracker to come up fails
  // only at its deadline.
  auto untrusted = [&](const grpc::Status& s) -> Status {
    std::string why = farm::untrusted_server_reason(s, o.tracker, o.auth);
    if (why.empty()) return Status::Ok();
    server->Shutdown();
    return InvalidArgument("cannot register with the tracker at " + o.tracker + ": " + why);
  };
  KILN_RETURN_IF_ERROR(untrusted(grpc::Status(grpc::StatusCode::UNAVAILABLE, "not tried yet")));
  v1::RegisterReply registered;
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(o.register_wait_s * 1000));
  while (true) {
    const double left_s =
        std::chrono::duration<double>(give_up - std::chrono::steady_clock::now()).count();
    grpc::Status r = register_once(&registered, std::clamp(left_s, 0.1, 10.0));
    if (r.ok()) break;
    // Refusals (a bad key, wrong credentials) do not go away by waiting.
    const bool transient = r.error_code() == grpc::StatusCode::UNAVAILABLE ||
                           r.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    KILN_RETURN_IF_ERROR(untrusted(r));
    if (!transient || std::chrono::steady_clock::now() >= give_up) {
      server->Shutdown();
      return IoError("cannot register with the tracker at " + o.tracker + ": " + r.error_message());
    }
    spdlog::warn("registering with {}: {}; trying again", o.tracker, r.error_message());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::printf("kiln runner %s listening on %s, registered with %s as %s\n", o.name.c_str(),
              address.c_str(), o.tracker.c_str(), o.key.c_str());
  std::fflush(stdout);

  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  double interval = std::max(0.1, registered.heartbeat_interval_s());
  std::thread heartbeats([&] {
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, std::chrono::duration<double>(interval), [&] { return stopping; })) {
      lock.unlock();
      v1::HeartbeatRequest hb;
      hb.set_runner_id(registered.runner_id());
      v1::HeartbeatReply hr;
      grpc::ClientContext ctx;
      ctx.set_deadline(deadline(5));
      grpc::Status s = tracker->Heartbeat(&ctx, hb, &hr);
      if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
        // The tracker restarted or forgot us: register again.
        v1::RegisterReply again;
        if (register_once(&again, 5).ok()) registered = again;
      } else if (!s.ok()) {
        spdlog::warn("heartbeat to {} failed: {}", o.tracker, s.error_message());
      }
      lock.lock();
    }
  });

  spdlog::info("stopping ({})", farm::wait_for_stop_signal());
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  cv.notify_all();
  heartbeats.join();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return Status::Ok();
}

}  // namespace kiln::runner
