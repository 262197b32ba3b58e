#include "dashboard/server.h"

#include <httplib.h>
#include <pthread.h>
#include <sched.h>

#include <cstdio>

#include "dashboard/gated_server.h"
#include "dashboard/index_page.h"
#include "dashboard/job_metrics.h"
#include "dashboard/prometheus_text.h"
#include "dashboard/token.h"
#include "farm/security.h"
#include "report/report.h"

namespace kiln::dashboard {

namespace {

constexpr const char* kCookie = "kiln_token";
constexpr const char* kHtmlType = "text/html; charset=utf-8";
constexpr const char* kTextType = "text/plain; charset=utf-8";
// Inline styles and scripts only (the pages are self-contained); fetch() to the page's own URL;
// never framed.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; frame-ancestors 'none'";

// HOST:PORT, an IPv6 host without its brackets (what the socket API takes).
Result<farm::HostPort> parse_listen(const std::string& listen) {
  KILN_ASSIGN_OR_RETURN(farm::HostPort out, farm::parse_listen_address("--http", listen));
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  return out;
}

// The value of cookie `name` in a Cookie header ("a=1; b=2"), empty if absent.
std::string cookie_value(const std::string& header, const std::string& name) {
  size_t at = 0;
  while (at < header.size()) {
    size_t end = header.find(';', at);
    if (end == std::string::npos) end = header.size();
    size_t begin = header.find_first_not_of(' ', at);
    if (begin < end && header.compare(begin, name.size() + 1, name + "=") == 0) {
      return header.substr(begin + name.size() + 1, end - begin - name.size() - 1);
    }
    at = end + 1;
  }
  return "";
}

std::string printable(const std::string& text);

// The request's target without its token parameter: where the browser is sent once its
// cookie is set. Only ever a path on this server ("//host" would leave it).
std::string target_without_token(const httplib::Request& req) {
  std::string path = req.target.substr(0, req.target.find('?'));
  // A browser reads "//x" and "/\x" as another host.
  if (path.empty() || path[0] != '/' || path.rfind("//", 0) == 0 ||
      path.find('\\') != std::string::npos) {
    path = "/";
  }
  size_t q = req.target.find('?');
  if (q == std::string::npos) return path;
  std::string kept;
  std::string query = req.target.substr(q + 1);
  size_t at = 0;
  while (at <= query.size()) {
    size_t end = query.find('&', at);
    if (end == std::string::npos) end = query.size();
    std::string part = query.substr(at, end - at);
    if (!part.empty() && part.rfind("token=", 0) != 0 && part != "token") {
      kept += (kept.empty() ? "" : "&") + part;
    }
    at = end + 1;
  }
  return printable(kept.empty() ? path : path + "?" + kept);
}

// A value for Location: every byte outside printable ASCII percent-encoded, so that no control
// character of the request (a raw \x01, a tab, DEL) is echoed into a response header.
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c > 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// Whether a request's Authorization or Cookie header carries the token.
bool credentials_match(const std::string& authorization, const std::string& cookie,
                       const std::string& expected) {
  const std::string bearer = "Bearer ";
  return (authorization.rfind(bearer, 0) == 0 &&
          token_matches(authorization.substr(bearer.size()), expected)) ||
         token_matches(cookie_value(cookie, kCookie), expected);
}

// Whether a raw request head is authorized, by its headers or a token= query parameter; the
// gate in front of the workers asks (dashboard/gated_server.h).
bool head_authorized(std::string_view head, const std::string& expected) {
  if (credentials_match(head_header(head, "Authorization"), head_header(head, "Cookie"),
                        expected)) {
    return true;
  }
  const std::string target = head_target(head);
  const size_t q = target.find('?');
  if (q == std::string::npos) return false;
  const std::string query = target.substr(q + 1);
  size_t at = 0;
  while (at <= query.size()) {
    size_t end = query.find('&', at);
    if (end == std::string::npos) end = query.size();
    if (query.compare(at, 6, "token=") == 0 &&
        token_matches(query.substr(at + 6, end - at - 6), expected)) {
      return true;
    }
    at = end + 1;
  }
  return false;
}

// The dashboard's threads run at SCHED_IDLE: they get a core only when nothing else wants it, so
// a page rendered while a job times a kernel never takes the kernel's CPU. (A thread may always
// lower its own policy; if the kernel refuses anyway, it stays at normal priority.)
void run_at_idle_priority() {
  sched_param param{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
}

// cpp-httplib's thread pool, its workers at idle priority.
class IdleThreadPool final : public httplib::TaskQueue {
 public:
  explicit IdleThreadPool(size_t threads) : pool_(threads) {}
  void enqueue(std::function<void()> fn) override {
    pool_.enqueue([fn = std::move(fn)] {
      thread_local bool lowered = false;
      if (!lowered) run_at_idle_priority();
      lowered = true;
      fn();
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
};

void text_reply(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  res.set_content(text + "\n", kTextType);
}

}  // namespace

DashboardServer::DashboardServer(const DashboardOptions& options, daemon::JobManager& manager)
    : options_(options), manager_(manager) {}

DashboardServer::~DashboardServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<DashboardServer>> DashboardServer::start(const DashboardOptions& options,
                                                                daemon::JobManager& manager) {
  KILN_ASSIGN_OR_RETURN(farm::HostPort at, parse_listen(options.listen));
  const bool tls = !options.certs_dir.empty();
  if (!farm::is_loopback_host(at.host) && !tls) {
    return InvalidArgument("--http " + options.listen +
                           ": refusing to serve the dashboard beyond loopback without TLS (its "
                           "token would cross the network in clear): pass --certs DIR (kiln certs "
                           "init DIR --host " +
                           at.host + ") to serve it over HTTPS, or use 127.0.0.1");
  }
  KILN_ASSIGN_OR_RETURN(DashboardToken token,
                        dashboard_token(options.token_file, options.certs_dir, options.db));
  std::unique_ptr<DashboardServer> d(new DashboardServer(options, manager));
  d->token_ = token.token;
  KILN_ASSIGN_OR_RETURN(d->metrics_, JobMetrics::open(options.db));
  auto gated = std::make_unique<GatedServer>(
      [token = d->token_](std::string_view head) { return head_authorized(head, token); });
  if (tls) {
    farm::CertFiles files = farm::cert_files(options.certs_dir);
    if (!gated->use_tls(files.server_pem, files.server_key)) {
      return IoError("--http: cannot load the TLS certificate " + files.server_pem + " and key " +
                     files.server_key);
    }
  }
  d->server_ = std::move(gated);
  d->route();
  int port = at.port;
  if (at.port == 0) {
    port = d->server_->bind_to_any_port(at.host);
  } else if (!d->server_->bind_to_port(at.host, at.port)) {
    port = -1;
  }
  if (port <= 0) {
    return IoError("--http: cannot listen on " + options.listen +
                   " (address in use or unavailable)");
  }
  d->url_ = std::string(tls ? "https://" : "http://") +
            (at.host.find(':') != std::string::npos ? "[" + at.host + "]" : at.host) + ":" +
            std::to_string(port) + "/";
  httplib::Server* server = d->server_.get();
  d->thread_ = std::thread([server] {
    run_at_idle_priority();
    server->listen_after_bind();
  });
  std::printf(
      "kiln serve dashboard on %s (token %s %s; open %s?token=TOKEN once in a browser, or send "
      "Authorization: Bearer TOKEN)\n",
      d->url_.c_str(), token.created ? "written to" : "in", token.path.c_str(), d->url_.c_str());
  std::fflush(stdout);
  return d;
}

void DashboardServer::route() {
  httplib::Server& s = *server_;
  // A thread per connection; the workers' slots are gated (dashboard/gated_server.h).
  s.new_task_queue = [] { return new IdleThreadPool(GatedServer::kConnections); };
  s.set_read_timeout(5, 0);
  s.set_write_timeout(5, 0);
  s.set_keep_alive_timeout(5);
  s.set_keep_alive_max_count(100);
  s.set_payload_max_length(1024);
  s.set_default_headers({{"Cache-Control", "no-store"},
                         {"X-Content-Type-Options", "nosniff"},
                         {"Referrer-Policy", "no-referrer"}});

  const bool tls = !options_.certs_dir.empty();
  s.set_pre_routing_handler([this, tls](const httplib::Request& req, httplib::Response& res) {
    const std::string& expected = token_;
    if (req.has_param("token")) {
      if (!token_matches(req.get_param_value("token"), expected)) {
        text_reply(res, 401, "kiln serve: wrong token");
        return httplib::Server::HandlerResponse::Handled;
      }
      res.status = 303;
      res.set_header("Location", target_without_token(req));
      res.set_header("Set-Cookie", std::string(kCookie) + "=" + expected +
                                       "; Path=/; HttpOnly; SameSite=Strict" +
                                       (tls ? "; Secure" : ""));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!credentials_match(req.get_header_value("Authorization"), req.get_header_value("Cookie"),
                           expected)) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"kiln serve\"");
      text_reply(res, 401,
                 "kiln serve: unauthorized: send \"Authorization: Bearer <token>\", or open the "
                 "page once with ?token=<token> (the token file kiln serve printed at start)");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.set_header("Allow", "GET, HEAD");
      text_reply(res, 405, "kiln serve: the dashboard is read-only (GET and HEAD only)");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    text_reply(res, 500, "kiln serve: internal error");
  });
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty() && res.status == 404) {
      text_reply(res, 404, "kiln serve: no page " + req.path + " (try / or /metrics)");
    }
  });

  s.Get("/", [this](const httplib::Request&, httplib::Response& res) {
    Result<std::vector<daemon::JobView>> jobs = manager_.list();
    if (!jobs.ok()) return text_reply(res, 500, "kiln serve: " + jobs.status().message());
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    res.set_content(dashboard_index_html(*jobs, options_.refresh_seconds), kHtmlType);
  });

  s.Get(R"(/job/(\d{1,18}))", [this](const httplib::Request& req, httplib::Response& res) {
    const int64_t id = std::stoll(req.matches[1].str());
    Result<bool> exists = manager_.exists(id);
    if (!exists.ok()) return text_reply(res, 500, "kiln serve: " + exists.status().message());
    if (!*exists) return text_reply(res, 404, "kiln serve: no job " + std::to_string(id));
    Result<std::string> page = job_page_html(id);
    if (!page.ok()) return text_reply(res, 500, "kiln serve: " + page.status().message());
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    res.set_content(*page, kHtmlType);
  });

  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Result<std::vector<daemon::JobView>> jobs = manager_.list();
    if (!jobs.ok()) return text_reply(res, 500, "kiln serve: " + jobs.status().message());
    Result<std::string> text = metrics_->render(*jobs, manager_.measure_gate_load());
    if (!text.ok()) return text_reply(res, 500, "kiln serve: " + text.status().message());
    res.set_content(*text, PrometheusText::kContentType);
  });
}

Result<std::string> DashboardServer::job_page_html(int64_t id) {
  report::Scope scope;
  scope.job = id;
  report::RenderOptions options;
  options.refresh_seconds = options_.refresh_seconds;
  return report::render_report_html(options_.db, scope, options);
}

}  // namespace kiln::dashboard
