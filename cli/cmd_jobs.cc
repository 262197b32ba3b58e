// kiln serve and its clients: kiln submit, jobs, watch, cancel, pause, resume, and
// the daemon's hidden model worker (daemon/model_worker.h).
// `kiln export --job` is in cmd_store.cc with the other exports.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/farm_commands.h"
#include "cli/job_commands.h"
#include "cli/log_options.h"
#include "cli/tuner_client.h"
#include "common/safe_file.h"
#include "common/worker_process.h"
#include "daemon/model_worker.h"
#include "daemon/tuner_service.h"
#include "dashboard/server.h"
#include "jobs/job_spec.h"
#include "store/open_store.h"

namespace kiln::cli {

namespace {

// A job file is a page of YAML; anything near the cap is a mistake (or /dev/zero).
constexpr int64_t kMaxJobFileBytes = 1 << 20;

std::string read_text_file(const std::string& path) {
  return value_or_exit(read_regular_file(path, kMaxJobFileBytes, "job file"));
}

std::string duration_text(double seconds) {
  int64_t s = static_cast<int64_t>(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  }
  return buf;
}

nlohmann::ordered_json job_json(const v1::JobStatus& j) {
  nlohmann::ordered_json out;
  out["id"] = j.job_id();
  out["name"] = j.name();
  out["state"] = j.state();
  out["reason"] = j.reason();
  out["host"] = j.host();  // the daemon running it; "" when not running
  out["priority"] = j.priority();
  out["records"] = j.records();
  out["trials"] = j.trials();
  out["seconds"] = j.seconds();
  out["estimated_latency_ms"] = j.estimated_latency_ms();
  // false: some task has no successful trial yet, so the estimate is a lower bound.
  out["latency_complete"] = j.latency_complete();
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (const v1::TaskStatus& t : j.tasks()) {
    nlohmann::ordered_json x;
    x["template"] = t.template_name();
    x["workload"] = t.workload();
    x["trials"] = t.trials();
    x["best_ms"] = t.best_ms();
    x["best_gflops"] = t.best_gflops();
    tasks.push_back(x);
  }
  out["tasks"] = tasks;
  return out;
}

// The lines `kiln watch` shows for a job.
std::vector<std::string> watch_lines(const v1::JobStatus& j) {
  std::vector<std::string> lines;
  char buf[512];
  std::string latency = "n/a";
  if (j.estimated_latency_ms() > 0) {
    std::snprintf(buf, sizeof buf, "%s%.4f ms",
                  j.latency_complete() ? "" : ">= ", j.estimated_latency_ms());
    latency = buf;
  }
  const std::string state = j.state() + (j.host().empty() ? "" : " on " + j.host());
  std::snprintf(buf, sizeof buf, "job %lld%s%s%s: %s%s | %lld records | %s | est. latency %s",
                static_cast<long long>(j.job_id()), j.name().empty() ? "" : " (", j.name().c_str(),
                j.name().empty() ? "" : ")", state.c_str(),
                j.reason().empty() ? "" : (" (" + j.reason() + ")").c_str(),
                static_cast<long long>(j.records()), duration_text(j.seconds()).c_str(),
                latency.c_str());
  lines.push_back(buf);
  for (int i = 0; i < j.tasks_size(); ++i) {
    const v1::TaskStatus& t = j.tasks(i);
    std::snprintf(buf, sizeof buf, "  %s %-22s %6lld trials  best %8.2f GFLOPS %10.4f ms  %s",
                  i == j.current_task() ? ">" : " ", t.template_name().c_str(),
                  static_cast<long long>(t.trials()), t.best_gflops(), t.best_ms(),
                  t.workload().c_str());
    lines.push_back(buf);
  }
  return lines;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  struct Options : daemon::ServeOptions {
    dashboard::DashboardOptions http;
  };
  auto o = std::make_shared<Options>();
  auto log = std::make_shared<LogOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "run tuning jobs (kiln submit) from a queue kept in the record store; killed at any "
      "moment, it resumes them when started again");
  cmd->add_option("--db", o->db,
                  "record store: records and jobs; a SQLite file (created if absent, one daemon "
                  "per file) or postgresql://USER@HOST:PORT/DB, a team's store that several "
                  "daemons share (README: Team store)");
  add_server_options(cmd, &o->listen, &o->certs_dir, &o->insecure);
  cmd->get_option("--listen")->default_str(kDefaultServeAddress);
  cmd->add_option("--job-lease", o->job_lease_s,
                  "seconds a running job stays this daemon's without a renewal (renewed every "
                  "quarter of it): on a shared store, another daemon takes over the jobs of one "
                  "that died this long after")
      ->check(CLI::Range(1.0, 86400.0))
      ->default_str("60");
  add_bounded(cmd, "--jobs", &o->max_jobs, 1, 1024,
              "jobs run at once (their local measurements still take turns, by priority)");
  cmd->add_option("--http", o->http.listen,
                  "also serve the dashboard (jobs, each job's live report) and Prometheus "
                  "/metrics on HOST:PORT, read-only, behind a token; beyond loopback only "
                  "with --certs (HTTPS)");
  cmd->add_option("--http-token-file", o->http.token_file,
                  "the dashboard's token (default: DIR/token of --certs, else DB.http-token, "
                  "created 0600 at the first start)");
  cmd->add_option("--export-dir", o->export_dirs,
                  "jobs may write their exports (export.tvm_log, export.compiled_model) in this "
                  "directory or below (repeatable; default: the --db file's directory)");
  add_bounded(cmd, "--http-refresh", &o->http.refresh_seconds, 1, 3600,
              "seconds between the dashboard pages' refreshes in place");
  add_log_options(cmd, log.get());
  return [o, log] {
    start_log("kiln serve", *log);
    o->worker_binary = self_binary();
    // sqlite://PATH is the file PATH: the lock, the exports' default directory and the
    // dashboard's token are beside it.
    if (std::optional<std::string> file = store::sqlite_file(o->db)) o->db = *file;
    if (store::is_postgres_location(o->db) && !o->http.listen.empty() &&
        o->http.token_file.empty() && o->certs_dir.empty()) {
      std::fprintf(stderr,
                   "kiln serve: --http on a PostgreSQL store needs --http-token-file or --certs "
                   "(there is no store file to keep the token beside)\n");
      return 2;
    }
    if (!o->http.listen.empty()) {
      o->http.certs_dir = o->certs_dir;
      o->http.db = o->db;
      o->start_beside =
          [http = o->http](
              daemon::JobManager& manager) -> Result<std::unique_ptr<daemon::BesideServer>> {
        KILN_ASSIGN_OR_RETURN(std::unique_ptr<dashboard::DashboardServer> server,
                              dashboard::DashboardServer::start(http, manager));
        return std::unique_ptr<daemon::BesideServer>(std::move(server));
      };
    }
    block_stop_signals();
    ok_or_exit(daemon::run_serve(*o));
    return 0;
  };
}

Command add_model_worker_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "model-worker", "(internal) kiln serve's import or compile of a job's model on fds 3 and 4");
  cmd->group("");  // hidden
  return [] {
    daemon::serve_model_worker(WorkerProcess::kExecRequestFd, WorkerProcess::kExecResponseFd);
    return 0;
  };
}

Command add_submit_command(CLI::App& app) {
  struct Options {
    std::string file;
    TunerClientOptions client;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "submit", "submit a job file (configs/jobs/*.yaml) to kiln serve; prints the job id");
  cmd->add_option("job", o->file, "the job file (YAML)")->required();
  add_tuner_client_options(cmd, &o->client);
  return [o] {
    std::string text = read_text_file(o->file);
    std::string cwd = std::filesystem::current_path().string();
    // Checked here first, so that a mistake names the file the user wrote.
    value_or_exit(daemon::parse_job_spec(text, o->file, cwd));
    v1::SubmitJobRequest req;
    req.set_spec_yaml(text);
    req.set_base_dir(cwd);
    v1::SubmitJobReply reply;
    auto ctx = tuner_context(o->client);
    grpc::Status s = tuner_stub(o->client)->SubmitJob(ctx.get(), req, &reply);
    if (!s.ok()) throw_rpc_error(o->client, s);
    std::printf("%lld\n", static_cast<long long>(reply.job_id()));
    return 0;
  };
}

Command add_jobs_command(CLI::App& app) {
  struct Options {
    bool json = false;
    TunerClientOptions client;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("jobs", "list kiln serve's jobs with their state");
  cmd->add_flag("--json", o->json, "one JSON array");
  add_tuner_client_options(cmd, &o->client);
  return [o] {
    // Page by page (proto/kiln.proto: ListJobs), so that no number of jobs overflows a reply.
    v1::JobList reply;
    auto stub = tuner_stub(o->client);
    for (v1::ListJobsRequest req;;) {
      v1::JobList page;
      auto ctx = tuner_context(o->client);
      grpc::Status s = stub->ListJobs(ctx.get(), req, &page);
      if (!s.ok()) throw_rpc_error(o->client, s);
      for (v1::JobStatus& j : *page.mutable_jobs()) *reply.add_jobs() = std::move(j);
      if (page.next_after_id() <= req.after_id())
        break;  // the last page (or a server without pages)
      req.set_after_id(page.next_after_id());
    }
    if (o->json) {
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const v1::JobStatus& j : reply.jobs()) all.push_back(job_json(j));
      std::printf("%s\n", all.dump().c_str());
      return 0;
    }
    std::printf("%4s  %-9s %4s %8s %8s  %-20s %-24s %s\n", "ID", "STATE", "PRI", "RECORDS", "TIME",
                "NAME", "HOST", "REASON");
    for (const v1::JobStatus& j : reply.jobs()) {
      std::printf("%4lld  %-9s %4lld %8lld %8s  %-20s %-24s %s\n",
                  static_cast<long long>(j.job_id()), j.state().c_str(),
                  static_cast<long long>(j.priority()), static_cast<long long>(j.records()),
                  duration_text(j.seconds()).c_str(), j.name().empty() ? "-" : j.name().c_str(),
                  j.host().empty() ? "-" : j.host().c_str(), j.reason().c_str());
    }
    return 0;
  };
}

Command add_watch_command(CLI::App& app) {
  struct Options {
    std::string job;
    TunerClientOptions client;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "watch",
      "follow a job: trials, time, best per task and estimated latency, redrawn in place until "
      "it ends (exit 0 when done, 1 when failed or cancelled)");
  cmd->add_option("JOB", o->job, "job id")->required();
  add_tuner_client_options(cmd, &o->client);
  return [o] {
    v1::JobRef ref;
    ref.set_job_id(parse_job_id("JOB", o->job));
    auto ctx = tuner_context(o->client, /*stream=*/true);
    auto stub = tuner_stub(o->client);
    auto reader = stub->WatchJob(ctx.get(), ref);
    const bool tty = isatty(STDOUT_FILENO);
    size_t drawn = 0;
    v1::JobStatus status;
    bool any = false;
    while (reader->Read(&status)) {
      any = true;
      std::vector<std::string> lines = watch_lines(status);
      if (tty && drawn > 0) std::printf("\033[%zuA", drawn);  // back to the block's first line
      for (const std::string& line : lines)
        std::printf("%s%s\n", tty ? "\r\033[K" : "", line.c_str());
      drawn = lines.size();
      std::fflush(stdout);
    }
    grpc::Status s = reader->Finish();
    if (!s.ok()) throw_rpc_error(o->client, s);
    if (!any) throw CommandError{"kiln serve " + o->client.server + ": no status", kFailed};
    if (status.state() == "done") return 0;
    if (status.state() == "failed" || status.state() == "cancelled") return kFailed;
    std::fprintf(stderr, "kiln watch: the daemon stopped; job %s is %s\n", o->job.c_str(),
                 status.state().c_str());
    return kFailed;
  };
}

Command add_job_action_command(CLI::App& app, const char* name, const char* help,
                               grpc::Status (v1::Tuner::Stub::*rpc)(grpc::ClientContext*,
                                                                    const v1::JobRef&,
                                                                    v1::JobActionReply*)) {
  struct Options {
    std::string job;
    TunerClientOptions client;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("JOB", o->job, "job id")->required();
  add_tuner_client_options(cmd, &o->client);
  return [o, rpc] {
    v1::JobRef ref;
    ref.set_job_id(parse_job_id("JOB", o->job));
    v1::JobActionReply reply;
    auto ctx = tuner_context(o->client);
    auto stub = tuner_stub(o->client);
    grpc::Status s = ((*stub).*rpc)(ctx.get(), ref, &reply);
    if (!s.ok()) throw_rpc_error(o->client, s);
    std::printf("job %lld: %s%s\n", static_cast<long long>(reply.job().job_id()),
                reply.job().state().c_str(),
                reply.job().state() == "running" ? " (stops after the batch being measured)" : "");
    return 0;
  };
}

Command add_cancel_command(CLI::App& app) {
  return add_job_action_command(
      app, "cancel", "cancel a job (a running one after its batch being measured is recorded)",
      &v1::Tuner::Stub::CancelJob);
}

Command add_pause_command(CLI::App& app) {
  return add_job_action_command(app, "pause", "pause a job (kiln resume JOB continues it)",
                                &v1::Tuner::Stub::PauseJob);
}

Command add_resume_command(CLI::App& app) {
  return add_job_action_command(app, "resume", "queue a paused job again",
                                &v1::Tuner::Stub::ResumeJob);
}

}  // namespace kiln::cli
