// The Tuner gRPC service (proto/kiln.proto) over a JobManager, and `kiln serve`.
//
// Each handler validates the request (INVALID_ARGUMENT naming the field: a job_id that is not
// positive, an empty or invalid spec, an unknown export format), then asks the manager; an
// unknown job is NOT_FOUND, a state change that does not apply FAILED_PRECONDITION, a store
// failure INTERNAL.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "daemon/job_manager.h"
#include "proto/kiln.grpc.pb.h"

namespace kiln::daemon {

class TunerService final : public v1::Tuner::Service {
 public:
  // ListJobs' pages: entries are added until the page holds this much; a listed reason is cut
  // to kListReasonBytes (GetJob and WatchJob give it whole).
  static constexpr size_t kListPageBytes = 1 << 20;
  static constexpr size_t kListReasonBytes = 4096;

  explicit TunerService(JobManager& manager) : manager_(manager) {}

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest*,
                         v1::SubmitJobReply*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*, v1::JobList*) override;
  grpc::Status GetJob(grpc::ServerContext*, const v1::JobRef*, v1::JobStatus*) override;
  grpc::Status WatchJob(grpc::ServerContext*, const v1::JobRef*,
                        grpc::ServerWriter<v1::JobStatus>*) override;
  grpc::Status CancelJob(grpc::ServerContext*, const v1::JobRef*, v1::JobActionReply*) override;
  grpc::Status PauseJob(grpc::ServerContext*, const v1::JobRef*, v1::JobActionReply*) override;
  grpc::Status ResumeJob(grpc::ServerContext*, const v1::JobRef*, v1::JobActionReply*) override;
  grpc::Status ExportJob(grpc::ServerContext*, const v1::ExportJobRequest*,
                         v1::ExportJobReply*) override;

 private:
  grpc::Status check_job(int64_t id);
  grpc::Status status_of(int64_t id, v1::JobStatus* out);
  // check_job, then the manager's state change, then the job's status.
  grpc::Status act(int64_t id, Status (JobManager::*action)(int64_t), v1::JobActionReply* reply);
  JobManager& manager_;
};

v1::JobStatus to_proto(const JobView& view);

// What kiln serve runs beside its gRPC service (ServeOptions::start_beside); destroying it stops
// it.
class BesideServer {
 public:
  virtual ~BesideServer() = default;
};

// `kiln serve`: runs the job manager on `db` and serves Tuner on `listen` until SIGINT or
// SIGTERM, then drains (the running batches finish and are committed; the jobs stay queued for
// the next start). Prints "kiln serve listening on HOST:PORT" once ready. REQUIRES SIGINT and
// SIGTERM blocked in every thread (waited for with sigwait).
struct ServeOptions {
  std::string db = "kiln.db";
  std::string listen = "127.0.0.1:9300";
  std::string certs_dir;
  bool insecure = false;
  int max_jobs = 2;
  double job_lease_s = 60;  // JobManagerOptions::job_lease_s
  // Started once the job manager is open and before its jobs run, stopped after they drained:
  // a server beside the gRPC one over the same jobs (kiln serve --http: dashboard/server.h),
  // which the daemon knows only as this. An error stops kiln serve before any job runs.
  std::function<Result<std::unique_ptr<BesideServer>>(JobManager&)> start_beside;
  std::string worker_binary;             // the kiln binary
  std::vector<std::string> export_dirs;  // JobManagerOptions::export_dirs
};
Status run_serve(const ServeOptions& options);

}  // namespace kiln::daemon
