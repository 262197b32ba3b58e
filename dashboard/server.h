// `kiln serve --http HOST:PORT`: the daemon's read-only web side, on threads of its own beside
// the gRPC server (cpp-httplib behind dashboard/gated_server.h), at idle CPU priority (SCHED_IDLE),
// reading the store on connections of their own: the tuning never waits for it, and a page
// rendered while a kernel is timed does not take the kernel's core.
//   /           the index of the jobs (dashboard/index_page.h), refreshing in place
//   /job/<id>   the job's live view: kiln report's page of the job (report/report.h) with
//               refresh_seconds, rendered from a read-only connection to the store
//   /metrics    Prometheus text (dashboard/job_metrics.h)
// Every request needs the token (dashboard/token.h): "Authorization: Bearer <token>"
// (Prometheus, curl), or the cookie a browser gets from opening any page once with
// ?token=<token> (answered 303 to the same URL without it, with an HttpOnly SameSite=Strict
// cookie). Anything else: 401 with a one-line text body. Only GET and HEAD.
//
// A loopback address serves plain HTTP; any other is served over HTTPS with the certs dir's
// server certificate, and without --certs it is refused at start (the token would cross the
// network in clear). Requests are bounded: 8 KiB request line and header lines (cpp-httplib),
// no body accepted, 5 s read and write timeouts, 5 s keep-alive. A request's whole head (and
// the TLS handshake) must arrive within 5 s, idle connections wait without holding one of the 4
// workers, and one worker is kept for authorized requests (dashboard/gated_server.h): slow
// clients cannot hold the dashboard.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "daemon/job_manager.h"
#include "daemon/tuner_service.h"

namespace httplib {
class Server;
}

namespace kiln::dashboard {

class JobMetrics;

struct DashboardOptions {
  std::string listen;      // HOST:PORT (port 0: any free one)
  std::string token_file;  // --http-token-file (dashboard/token.h says where else it comes from)
  std::string certs_dir;   // HTTPS with DIR/server.{pem,key} and DIR/token when set
  std::string db;          // the store (read-only here)
  double refresh_seconds = 5;
};

class DashboardServer : public daemon::BesideServer {
 public:
  // Finds the token, binds and starts serving, and prints "kiln serve dashboard on URL (token
  // in FILE; ...)". kInvalidArgument for a malformed or refused address (what to pass instead)
  // or a refused token file, kIo when it cannot bind or the certificates cannot be loaded.
  static Result<std::unique_ptr<DashboardServer>> start(const DashboardOptions& options,
                                                        daemon::JobManager& manager);
  ~DashboardServer() override;  // stops and joins
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  // "http://127.0.0.1:PORT/" (https for TLS), with the bound port.
  const std::string& url() const { return url_; }

 private:
  DashboardServer(const DashboardOptions& options, daemon::JobManager& manager);
  void route();
  // The live view of job `id` (known to exist).
  Result<std::string> job_page_html(int64_t id);

  DashboardOptions options_;
  std::string token_;
  daemon::JobManager& manager_;
  std::unique_ptr<JobMetrics> metrics_;
  std::unique_ptr<httplib::Server> server_;
  std::string url_;
  std::thread thread_;
};

}  // namespace kiln::dashboard
