#include "dashboard/farm_metrics.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "jobs/job_spec.h"

namespace kiln::dashboard {

namespace {

constexpr auto kStatusDeadline = std::chrono::seconds(2);

std::string stub_key(const std::string& tracker, const farm::ClientAuth& auth) {
  return tracker + "\n" + auth.certs_dir + "\n" + auth.token_file + "\n" +
         (auth.insecure ? "insecure" : "");
}

}  // namespace

std::unique_ptr<v1::FarmStatus> FarmMetrics::status_of(const Farm& farm) {
  const std::string key = stub_key(farm.tracker, farm.auth);
  v1::Tracker::Stub* stub = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = stubs_.find(key);
    if (it == stubs_.end()) {
      Result<std::shared_ptr<grpc::ChannelCredentials>> creds = farm::client_credentials(farm.auth);
      if (!creds.ok()) return nullptr;
      it = stubs_.emplace(key, v1::Tracker::NewStub(grpc::CreateChannel(farm.tracker, *creds)))
               .first;
    }
    stub = it->second.get();  // stubs are never erased; a Stub is thread-safe
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kStatusDeadline);
  auto reply = std::make_unique<v1::FarmStatus>();
  if (!stub->Status(&ctx, v1::StatusRequest(), reply.get()).ok()) return nullptr;
  return reply;
}

void FarmMetrics::append(const std::vector<daemon::JobView>& jobs, PrometheusText& out) {
  std::map<std::string, Farm> farms;  // by stub_key: each asked once
  for (const daemon::JobView& j : jobs) {
    if (j.row.state != store::JobState::kRunning) continue;
    Result<daemon::JobSpec> spec =
        daemon::parse_job_spec(j.row.spec, "job " + std::to_string(j.row.id), j.row.base_dir);
    if (!spec.ok() || spec->run_on.tracker.empty()) continue;
    Farm f{spec->run_on.tracker, farm::ClientAuth{spec->run_on.certs_dir, spec->run_on.token_file,
                                                  spec->run_on.insecure}};
    farms.emplace(stub_key(f.tracker, f.auth), f);
  }
  std::vector<std::pair<std::string, std::unique_ptr<v1::FarmStatus>>> statuses;
  for (const auto& [key, f] : farms) statuses.emplace_back(f.tracker, status_of(f));

  out.family("kiln_farm_up", "gauge",
             "1 when the tracker of a running job's farm answered its Status call, else 0.");
  for (const auto& [tracker, status] : statuses) out.sample({{"tracker", tracker}}, status ? 1 : 0);
  out.family("kiln_farm_runners", "gauge",
             "Runners of a farm's key by state, as its tracker says.");
  for (const auto& [tracker, status] : statuses) {
    if (!status) continue;
    for (const v1::KeyStatus& k : status->keys()) {
      for (const auto& [state, n] : {std::pair<const char*, int>{"free", k.free()},
                                     {"busy", k.busy()},
                                     {"quarantined", k.quarantined()}}) {
        out.sample({{"tracker", tracker}, {"key", k.key()}, {"state", state}}, n);
      }
    }
  }
  out.family("kiln_farm_lease_queue", "gauge",
             "Lease requests waiting for a runner of a farm's key.");
  for (const auto& [tracker, status] : statuses) {
    if (!status) continue;
    for (const v1::KeyStatus& k : status->keys()) {
      out.sample({{"tracker", tracker}, {"key", k.key()}}, k.queued());
    }
  }
}

}  // namespace kiln::dashboard
