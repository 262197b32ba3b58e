#include "daemon/tuner_service.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>

#include "farm/security.h"
#include "farm/server_start.h"
#include "store/open_store.h"

namespace kiln::daemon {

namespace {

grpc::Status to_grpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  grpc::StatusCode code = s.code() == StatusCode::kInvalidArgument
                              ? grpc::StatusCode::INVALID_ARGUMENT
                              : grpc::StatusCode::INTERNAL;
  return grpc::Status(code, s.message());
}

}  // namespace

v1::JobStatus to_proto(const JobView& v) {
  v1::JobStatus p;
  p.set_job_id(v.row.id);
  p.set_name(v.row.name);
  p.set_state(store::job_state_name(v.row.state));
  p.set_reason(v.row.reason);
  if (v.row.state == store::JobState::kRunning) p.set_host(store::owner_host(v.row.owner));
  p.set_priority(v.row.priority);
  p.set_records(v.records);
  p.set_trials(v.progress.trials);
  p.set_seconds(v.row.seconds);
  p.set_estimated_latency_ms(v.progress.latency_s * 1e3);
  p.set_latency_complete(v.progress.latency_complete);
  p.set_current_task(v.progress.current_task);
  for (const TaskProgress& t : v.progress.tasks) {
    v1::TaskStatus* ts = p.add_tasks();
    ts->set_template_name(t.template_name);
    ts->set_workload(t.workload);
    ts->set_weight(t.weight);
    ts->set_trials(t.trials);
    ts->set_best_ms(t.best_seconds * 1e3);
    ts->set_best_gflops(t.best_gflops);
  }
  p.set_spec_yaml(v.row.spec);
  p.set_submitted(v.row.submitted);
  return p;
}

grpc::Status TunerService::check_job(int64_t id) {
  if (id <= 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "job_id: expected a positive job id, got " + std::to_string(id));
  }
  Result<bool> exists = manager_.exists(id);
  if (!exists.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, exists.status().message());
  if (!*exists) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no job " + std::to_string(id));
  return grpc::Status::OK;
}

grpc::Status TunerService::status_of(int64_t id, v1::JobStatus* out) {
  Result<JobView> v = manager_.get(id);
  if (!v.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, v.status().message());
  *out = to_proto(*v);
  return grpc::Status::OK;
}

grpc::Status TunerService::SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* req,
                                     v1::SubmitJobReply* reply) {
  if (req->spec_yaml().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "spec_yaml: empty job spec");
  }
  if (!req->base_dir().empty() && req->base_dir()[0] != '/') {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "base_dir: expected an absolute directory, got '" + req->base_dir() + "'");
  }
  Result<int64_t> id = manager_.submit(req->spec_yaml(), req->base_dir());
  if (!id.ok()) return to_grpc(id.status());
  reply->set_job_id(*id);
  return grpc::Status::OK;
}

grpc::Status TunerService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* req,
                                    v1::JobList* reply) {
  if (req->after_id() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "after_id: expected 0 or a job id, got " + std::to_string(req->after_id()));
  }
  Result<std::vector<JobView>> jobs = manager_.list();
  if (!jobs.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, jobs.status().message());
  // A listed entry is bounded (its spec is left out, its name capped by the spec's size cap, its
  // reason cut), and a page stops past kListPageBytes, so a page stays below gRPC's 4 MiB.
  size_t bytes = 0;
  for (const JobView& v : *jobs) {
    if (v.row.id <= req->after_id()) continue;
    if (bytes >= kListPageBytes) {
      reply->set_next_after_id(reply->jobs(reply->jobs_size() - 1).job_id());
      break;
    }
    v1::JobStatus* p = reply->add_jobs();
    *p = to_proto(v);
    p->clear_spec_yaml();
    if (p->reason().size() > kListReasonBytes) {
      p->set_reason(p->reason().substr(0, kListReasonBytes) + "... (kiln watch shows all)");
    }
    bytes += p->ByteSizeLong();
  }
  return grpc::Status::OK;
}

grpc::Status TunerService::GetJob(grpc::ServerContext*, const v1::JobRef* req,
                                  v1::JobStatus* reply) {
  grpc::Status s = check_job(req->job_id());
  if (!s.ok()) return s;
  return status_of(req->job_id(), reply);
}

grpc::Status TunerService::WatchJob(grpc::ServerContext* ctx, const v1::JobRef* req,
                                    grpc::ServerWriter<v1::JobStatus>* writer) {
  grpc::Status s = check_job(req->job_id());
  if (!s.ok()) return s;
  uint64_t seen = manager_.change_counter();
  std::string last;
  while (!ctx->IsCancelled()) {
    v1::JobStatus status;
    s = status_of(req->job_id(), &status);
    if (!s.ok()) return s;
    std::string now = status.SerializeAsString();
    if (now != last) {
      if (!writer->Write(status)) return grpc::Status::OK;  // the client went away
      last = now;
    }
    std::optional<store::JobState> state = store::parse_job_state(status.state());
    if ((state && store::is_final(*state)) || manager_.draining()) return grpc::Status::OK;
    seen = manager_.wait_for_change(seen, 1.0);
  }
  return grpc::Status::OK;
}

grpc::Status TunerService::act(int64_t id, Status (JobManager::*action)(int64_t),
                               v1::JobActionReply* reply) {
  grpc::Status checked = check_job(id);
  if (!checked.ok()) return checked;
  Status s = (manager_.*action)(id);
  if (!s.ok()) {
    grpc::StatusCode code = s.code() == StatusCode::kInvalidArgument
                                ? grpc::StatusCode::FAILED_PRECONDITION
                                : grpc::StatusCode::INTERNAL;
    return grpc::Status(code, s.message());
  }
  return status_of(id, reply->mutable_job());
}

grpc::Status TunerService::CancelJob(grpc::ServerContext*, const v1::JobRef* req,
                                     v1::JobActionReply* reply) {
  return act(req->job_id(), &JobManager::cancel, reply);
}

grpc::Status TunerService::PauseJob(grpc::ServerContext*, const v1::JobRef* req,
                                    v1::JobActionReply* reply) {
  return act(req->job_id(), &JobManager::pause, reply);
}

grpc::Status TunerService::ResumeJob(grpc::ServerContext*, const v1::JobRef* req,
                                     v1::JobActionReply* reply) {
  return act(req->job_id(), &JobManager::resume, reply);
}

grpc::Status TunerService::ExportJob(grpc::ServerContext*, const v1::ExportJobRequest* req,
                                     v1::ExportJobReply* reply) {
  if (!req->format().empty() && req->format() != "tvm") {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "format: expected tvm (or empty), got '" + req->format() + "'");
  }
  grpc::Status s = check_job(req->job_id());
  if (!s.ok()) return s;
  Result<std::string> log = manager_.export_tvm_log(req->job_id());
  if (!log.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, log.status().message());
  int64_t lines = 0;
  for (char c : *log) lines += c == '\n';
  reply->set_log(*log);
  reply->set_lines(lines);
  return grpc::Status::OK;
}

Status run_serve(const ServeOptions& options) {
  KILN_ASSIGN_OR_RETURN(
      std::shared_ptr<grpc::ServerCredentials> creds,
      farm::listen_credentials(options.listen, options.certs_dir, options.insecure));

  JobManagerOptions manager_options;
  manager_options.db = options.db;
  manager_options.max_jobs = options.max_jobs;
  manager_options.job_lease_s = options.job_lease_s;
  manager_options.worker_binary = options.worker_binary;
  manager_options.export_dirs = options.export_dirs;
  manager_options.log = [](const std::string& line) { spdlog::info("{}", line); };
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<JobManager> manager,
                        JobManager::open(std::move(manager_options)));
  TunerService service(*manager);
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  int port = 0;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server,
                        farm::start_server(builder, options.listen, creds, &port));
  std::unique_ptr<BesideServer> beside;
  if (options.start_beside) {
    KILN_ASSIGN_OR_RETURN(beside, options.start_beside(*manager));
  }
  manager->start();
  std::printf("kiln serve listening on %s (%s), jobs in %s\n",
              farm::bound_address(options.listen, port).c_str(),
              farm::security_text(!options.certs_dir.empty()),
              store::printable_location(options.db).c_str());
  std::fflush(stdout);

  spdlog::info("stopping ({}): finishing the running batches, then exiting",
               farm::wait_for_stop_signal());
  manager->drain();  // watchers see draining and end their streams
  beside.reset();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  spdlog::info(store::is_postgres_location(options.db)
                   ? "stopped; its running jobs went back to the queue, for any daemon of the store"
                   : "stopped; running jobs resume at the next start");
  return Status::Ok();
}

}  // namespace kiln::daemon
