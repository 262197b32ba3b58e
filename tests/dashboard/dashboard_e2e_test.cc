// kiln serve --http end to end: a real daemon process with a real small job, reached over HTTP
// (cpp-httplib's client and raw sockets) and rendered in headless Chromium. The token guards
// every page; /metrics parses as Prometheus text and shows the job's trials growing; the index
// and the job's live view render, show the job, and refresh their content in place; malformed
// requests neither crash nor hang the server; beyond loopback it is HTTPS or nothing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/daemon/serve_process.h"
#include "tests/dashboard/prometheus_parse.h"
#include "tests/run_kiln.h"
#include "tests/support/chart_markup.h"
#include "tests/support/headless_chromium.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using kiln::testing::run_kiln;
using kiln::testing::ServeProcess;
using kiln::testing::TempDir;

// One dense workload, random tuner, one timed run per config: a trial costs about a build.
std::string small_job(int trials) {
  return "name: dash-small\nworkloads: [\"dense:M=64,N=64,K=64\"]\ntemplate: dense_nopack.x86\n"
         "tuner: random\nseed: 5\nbudget: {trials: " +
         std::to_string(trials) +
         "}\nmeasure: {number: 1, repeat: 1, cooldown_interval: 0, timeout: 5, threads: 1, "
         "n_parallel: 1, build_timeout: 20}\n";
}

struct Dashboard {
  std::string url;  // http://127.0.0.1:PORT/
  std::string host;
  int port = 0;
  std::string token;
};

// What `kiln serve --http` announced in its log.
Dashboard dashboard_of(const ServeProcess& serve) {
  Dashboard d;
  std::smatch m;
  const std::string log = serve.log();
  static const std::regex line(
      R"(kiln serve dashboard on (https?://([0-9.]+):([0-9]+)/) \(token (?:written to|in) (\S+);)");
  if (!std::regex_search(log, m, line)) return d;
  d.url = m[1];
  d.host = m[2];
  d.port = std::stoi(m[3]);
  std::ifstream in(m[4].str());
  std::getline(in, d.token);
  return d;
}

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

int64_t submit(const std::string& address, const std::string& file) {
  testing::CommandResult r = run_kiln("submit --server " + address + " " + file);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return std::atoll(r.output.c_str());
}

std::string job_state(httplib::Client& http, const Dashboard& d) {
  auto res = http.Get("/metrics", bearer(d.token));
  if (!res || res->status != 200) return "";
  testing::Exposition e = testing::parse_exposition(res->body);
  for (const char* s : {"done", "failed", "cancelled", "running", "queued"}) {
    if (e.value("kiln_jobs{state=\"" + std::string(s) + "\"}") > 0) return s;
  }
  return "";
}

// A page of the dashboard in headless Chromium (tests/support/headless_chromium.h: a fresh
// profile, the network unusable beyond loopback), after `budget_ms` of virtual time: scripts ran
// and their fetches were answered. The browser logs in with ?token= and then holds the session
// cookie, which the page's refreshes send.
struct Rendered {
  testing::ChromiumRun dom;
  testing::ChromiumRun shot;
  std::optional<testing::PngStats> png;
  std::string png_error;
};
Rendered render(const std::string& chromium, const std::string& url, const std::string& png,
                int budget_ms) {
  testing::ChromiumOptions o;
  o.height = 1200;
  // Offline but for the daemon on loopback: names resolve to nothing except 127.0.0.1 (this
  // flag, given last, replaces the helper's), and the helper's dead proxy is bypassed for loopback.
  o.extra_flags = {"--virtual-time-budget=" + std::to_string(budget_ms),
                   "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"};
  Rendered r;
  r.shot = testing::screenshot(chromium, url, png, o);
  r.png = testing::png_stats(png, &r.png_error);
  r.dom = testing::dump_dom(chromium, url, o);
  return r;
}

// The page's content was swapped in place by its refresh script (report::live_refresh_script).
bool refreshed_in_place(const std::string& dom) {
  return dom.find("<span id=\"kiln-refresh\">updated ") != std::string::npos;
}

TEST(DashboardE2E, TokenMetricsAndPagesOfARunningJob) {
  TempDir dir;
  const std::string db = dir.file("k.db");
  ServeProcess serve({"--db", db, "--http", "127.0.0.1:0", "--http-refresh", "1"},
                     dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  Dashboard d = dashboard_of(serve);
  ASSERT_FALSE(d.url.empty()) << serve.log();
  ASSERT_EQ(d.token.size(), 64u);
  httplib::Client http(d.host, d.port);
  http.set_read_timeout(10, 0);

  // Without the token (or with a wrong one): 401, whatever the page.
  for (const std::string path : {"/", "/metrics", "/job/1", "/nowhere"}) {
    auto res = http.Get(path.c_str());
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
    EXPECT_NE(res->body.find("unauthorized"), std::string::npos) << res->body;
    EXPECT_EQ(http.Get(path.c_str(), bearer(std::string(64, '0')))->status, 401) << path;
    EXPECT_EQ(http.Get(path.c_str(), bearer(d.token + "0"))->status, 401) << path;
    EXPECT_EQ(http.Get(path.c_str(), {{"Cookie", "kiln_token=" + d.token.substr(1)}})->status, 401);
  }
  EXPECT_EQ(http.Get(("/?token=" + std::string(64, '0')).c_str())->status, 401);

  // ?token= once: 303 to the same URL without it, with the cookie; the cookie then suffices.
  auto login = http.Get(("/job/1?token=" + d.token + "&x=1").c_str());
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 303);
  EXPECT_EQ(login->get_header_value("Location"), "/job/1?x=1");
  const std::string cookie = login->get_header_value("Set-Cookie");
  EXPECT_EQ(cookie, "kiln_token=" + d.token + "; Path=/; HttpOnly; SameSite=Strict");
  EXPECT_EQ(http.Get("/", {{"Cookie", "a=b; kiln_token=" + d.token}})->status, 200);
  // A path a browser would read as another host is never where it is sent.
  EXPECT_EQ(http.Get(("//evil.example/?token=" + d.token).c_str())->get_header_value("Location"),
            "/");
  EXPECT_EQ(http.Post("/", bearer(d.token), "", "text/plain")->status, 405);

  const int kTrials = 80;
  const int64_t id = submit(serve.address(), dir.write("job.yaml", small_job(kTrials)));
  ASSERT_EQ(id, 1);
  EXPECT_EQ(http.Get("/job/2", bearer(d.token))->status, 404);

  // /metrics parses, and the job's trials grow to its budget.
  const std::string trials_key = "kiln_job_trials_total{job=\"1\",name=\"dash-small\"}";
  std::vector<double> seen;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  bool rendered_while_running = false;
  Rendered index, job;
  KILN_REQUIRE_CHROMIUM(chromium);
  while (std::chrono::steady_clock::now() < deadline) {
    auto res = http.Get("/metrics", bearer(d.token));
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    testing::Exposition e = testing::parse_exposition(res->body);
    ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << res->body;
    EXPECT_EQ(e.types["kiln_job_trials_total"], "counter");
    double trials = e.value(trials_key, 0);
    if (seen.empty() || trials != seen.back()) seen.push_back(trials);
    if (!rendered_while_running && trials > 0 && trials < kTrials) {
      rendered_while_running = true;
      index = render(chromium, d.url + "?token=" + d.token, dir.file("index.png"), 3500);
      job = render(chromium, d.url + "job/1?token=" + d.token, dir.file("job.png"), 3500);
    }
    if (trials >= kTrials && job_state(http, d) == "done") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), kTrials) << serve.log();
  EXPECT_GE(seen.size(), 2u) << "trials seen: " << ::testing::PrintToString(seen);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i], seen[i - 1]);  // a counter

  ASSERT_TRUE(rendered_while_running);
  for (const Rendered* page : {&index, &job}) {
    EXPECT_EQ(page->shot.exit_code, 0) << page->shot.err;
    ASSERT_TRUE(page->png) << page->png_error;
    EXPECT_GT(page->png->distinct_colors, 2);  // not a blank page
    EXPECT_GT(page->png->pixels_unlike_corner, 1000);
    EXPECT_EQ(page->dom.exit_code, 0) << page->dom.err;
    EXPECT_TRUE(refreshed_in_place(page->dom.out)) << page->dom.out;
  }
  EXPECT_NE(index.dom.out.find("href=\"/job/1\">dash-small</a>"), std::string::npos)
      << index.dom.out;
  // Rendered while the job ran: its budget and how far it had got, as text and as a bar.
  EXPECT_NE(index.dom.out.find("<td class=\"budget\">80 trials</td>"), std::string::npos)
      << index.dom.out;
  EXPECT_TRUE(std::regex_search(
      index.dom.out, std::regex("<td class=\"progress\"><progress max=\"1\" value=\"0\\.[0-9]+\">"
                                "</progress> [0-9]+ % \\([0-9]+ of 80 trials\\)</td>")))
      << index.dom.out;
  // The job's live view is kiln report's page of the job: its name; where its run's time went
  // (build, run, cooldown, store, tuner); its one task's best-so-far against wall time (one
  // source: the job) and against trials (with its trials as dots, failures by kind if any).
  EXPECT_NE(job.dom.out.find("kiln report: job 1"), std::string::npos) << job.dom.out;
  EXPECT_NE(job.dom.out.find("dash-small"), std::string::npos) << job.dom.out;
  const std::string charts = ::testing::PrintToString(testing::charts_of(job.dom.out));
  EXPECT_EQ(testing::series_of_chart(job.dom.out, "time_split", 0), 5) << charts;
  EXPECT_EQ(testing::series_of_chart(job.dom.out, "best_vs_time", 0), 1) << charts;
  EXPECT_GE(testing::series_of_chart(job.dom.out, "best_vs_trials", 0), 2) << charts;
  EXPECT_EQ(testing::series_of_chart(job.dom.out, "best_vs_trials", 1), -1) << charts;

  // The same numbers, machine-readable from the CLI: kiln jobs --json (one array) and kiln best
  // --json (one object per line), read while the daemon holds the store.
  testing::CommandResult jobs = run_kiln("jobs --json --server " + serve.address());
  ASSERT_EQ(jobs.exit_code, 0) << jobs.output;
  nlohmann::json all = nlohmann::json::parse(jobs.output, nullptr, false);
  ASSERT_TRUE(all.is_array() && all.size() == 1u) << jobs.output;
  const nlohmann::json& j = all[0];
  EXPECT_EQ(j["id"], 1);
  EXPECT_EQ(j["name"], "dash-small");
  EXPECT_EQ(j["state"], "done");
  EXPECT_EQ(j["records"], kTrials);
  EXPECT_EQ(j["trials"], kTrials);
  EXPECT_TRUE(j["seconds"].is_number());
  EXPECT_EQ(j["latency_complete"], true);
  EXPECT_GT(j["estimated_latency_ms"].get<double>(), 0);
  ASSERT_EQ(j["tasks"].size(), 1u);
  EXPECT_EQ(j["tasks"][0]["template"], "dense_nopack.x86");
  EXPECT_EQ(j["tasks"][0]["workload"], "dense:K=64,M=64,N=64,bias=0");  // canonical
  EXPECT_GT(j["tasks"][0]["best_gflops"].get<double>(), 0);

  FILE* pipe = popen((std::string(KILN_BINARY) + " best --json --db " + db).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string best_out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) best_out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0);
  std::istringstream lines(best_out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    nlohmann::json b = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(b.is_object()) << line;
    ++count;
    EXPECT_EQ(b["task"], "dense_nopack.x86");
    EXPECT_EQ(b["workload"], "dense:K=64,M=64,N=64,bias=0");
    EXPECT_EQ(b["source"], "kiln serve job 1");
    EXPECT_GT(b["gflops"].get<double>(), 0);
    EXPECT_NEAR(b["mean_cost_s"].get<double>() * 1e3, j["tasks"][0]["best_ms"].get<double>(), 1e-9);
    EXPECT_TRUE(b["entity"].is_array());
  }
  EXPECT_EQ(count, 1) << best_out;
}

// A job measuring on a farm: /metrics shows its tracker's runner states. Its key has no runner,
// so its batch waits in the tracker's lease queue (run_on.runner_wait) before the job fails.
TEST(DashboardE2E, MetricsShowTheRunnerStatesOfAJobsFarm) {
  TempDir dir;
  const std::string certs = dir.file("certs");
  ASSERT_EQ(run_kiln("certs init " + certs).exit_code, 0);
  ServeProcess tracker({"--certs", certs}, dir.file("tracker.log"), "tracker");
  ASSERT_FALSE(tracker.address().empty()) << tracker.log();
  ServeProcess serve({"--db", dir.file("k.db"), "--http", "127.0.0.1:0"}, dir.file("serve.log"));
  Dashboard d = dashboard_of(serve);
  ASSERT_FALSE(d.url.empty()) << serve.log();
  submit(serve.address(),
         dir.write("farm.yaml", small_job(4) + "run_on: {tracker: \"" + tracker.address() +
                                    "\", key: nobody, certs: " + certs + ", runner_wait: 8}\n"));
  httplib::Client http(d.host, d.port);
  const std::string t = "tracker=\"" + tracker.address() + "\"";
  testing::Exposition e;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    auto res = http.Get("/metrics", bearer(d.token));
    ASSERT_TRUE(res && res->status == 200);
    e = testing::parse_exposition(res->body);
    ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << res->body;
    if (e.value("kiln_farm_lease_queue{" + t + ",key=\"nobody\"}") >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(e.value("kiln_farm_up{" + t + "}"), 1);
  EXPECT_EQ(e.value("kiln_farm_lease_queue{" + t + ",key=\"nobody\"}"), 1)
      << ::testing::PrintToString(e.samples) << tracker.log();
  EXPECT_EQ(e.value("kiln_farm_runners{" + t + ",key=\"nobody\",state=\"free\"}"), 0);
  EXPECT_EQ(e.value("kiln_jobs{state=\"running\"}"), 1);
  // Once the tracker is gone, the scrape says so instead of failing.
  tracker.kill(SIGKILL);
  tracker.wait_exit(5);
  auto res = http.Get("/metrics", bearer(d.token));
  ASSERT_TRUE(res && res->status == 200);
  e = testing::parse_exposition(res->body);
  if (e.value("kiln_jobs{state=\"running\"}") == 1) {
    EXPECT_EQ(e.value("kiln_farm_up{" + t + "}"), 0) << res->body;
  }
}

// A TCP connection to the dashboard (-1 if refused).
int connect_to(const Dashboard& d) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(d.port));
  inet_pton(AF_INET, d.host.c_str(), &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Writes `bytes` to a new connection; what the server answers until it closes it, or until
// nothing came for `timeout_ms`.
std::string send_raw(const Dashboard& d, const std::string& bytes, bool half_close,
                     int timeout_ms = 10000) {
  int fd = connect_to(d);
  if (fd < 0) return "";
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close before reading everything
    sent += static_cast<size_t>(n);
  }
  // A bad request may be incomplete: ending the stream makes the server see all there is. (A
  // complete one is not half-closed: cpp-httplib then takes the client for gone and answers
  // nothing.)
  if (half_close) ::shutdown(fd, SHUT_WR);
  std::string reply;
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, timeout_ms) > 0) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return reply;
}

// Whether the server closes connection `fd` (reading and dropping what it sends), with no
// more than `timeout_ms` between two reads.
bool closed_by_server(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  char buf[512];
  while (::poll(&p, 1, timeout_ms) == 1) {
    if (::recv(fd, buf, sizeof buf, 0) <= 0) return true;
  }
  return false;
}

// An authorized GET /metrics, as raw bytes.
std::string metrics_request(const Dashboard& d) {
  return "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + d.token +
         "\r\nConnection: close\r\n\r\n";
}

TEST(DashboardE2E, MalformedRequestsNeitherCrashNorHang) {
  TempDir dir;
  ServeProcess serve({"--db", dir.file("k.db"), "--http", "127.0.0.1:0"}, dir.file("serve.log"));
  Dashboard d = dashboard_of(serve);
  ASSERT_FALSE(d.url.empty()) << serve.log();
  const std::string ok_request = metrics_request(d);

  // Two clients that send half a request and stall hold a worker each, not the server.
  int stalled[2];
  for (int& fd : stalled) {
    fd = connect_to(d);
    ASSERT_GE(fd, 0);
    ASSERT_GT(::send(fd, "GET / HTTP/1.1\r\nHost:", 21, MSG_NOSIGNAL), 0);
  }
  auto t0 = std::chrono::steady_clock::now();
  for (const std::string& bad : {
           std::string("\x16\x03\x01garbage\r\n\r\n"),
           std::string("GET\r\n\r\n"),
           std::string("GET / HTTP/1.1\r\n") + std::string(20000, 'a') + "\r\n\r\n",
           "GET /" + std::string(20000, 'b') + " HTTP/1.1\r\n\r\n",
           std::string("POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + d.token +
               "\r\nContent-Length: 99999999\r\n\r\nabc",
           std::string("GET /job/99999999999999999999999 HTTP/1.1\r\nAuthorization: Bearer ") +
               d.token + "\r\n\r\n",
           std::string("GET /job/%00 HTTP/1.1\r\nAuthorization: Bearer ") + d.token + "\r\n\r\n",
           std::string(100000, '\0'),
       }) {
    std::string reply = send_raw(d, bad, /*half_close=*/true);
    if (!reply.empty()) {  // an error status, or nothing
      EXPECT_EQ(reply.find("HTTP/1.1 200"), std::string::npos) << reply.substr(0, 200);
    }
    std::string ok = send_raw(d, ok_request, /*half_close=*/false);
    EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << "after " << bad.substr(0, 60) << ": " << ok;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  // The stalled clients are answered and dropped after the read timeout (5 s).
  for (int fd : stalled) {
    EXPECT_TRUE(closed_by_server(fd, 15000));
    ::close(fd);
  }
  EXPECT_EQ(serve.wait_exit(0), -2) << "the daemon died:\n" << serve.log();
}

// Issue 20: four clients sending a header byte every 3 s held all four workers, and an
// authorized /metrics timed out. A head (and a TLS handshake) must now arrive whole within 5 s,
// waiting holds no worker, and one worker is kept for authorized requests.
//
// Eight slow clients (twice the workers) send `prefix`, then a byte every 200 ms (never long
// enough between two bytes for a per-read timeout). Meanwhile `authorized()` must get 200 within
// a second, three times, and `unauthorized()` 401 (their results: the status, -1 for none); each
// slow client is dropped once the head's deadline passes, though it keeps sending.
void expect_slow_clients_cannot_hold(const Dashboard& d, const std::string& prefix,
                                     const std::function<int()>& authorized,
                                     const std::function<int()>& unauthorized) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> slow;
  for (int i = 0; i < 8; ++i) {
    int fd = connect_to(d);
    ASSERT_GE(fd, 0);
    ASSERT_GT(::send(fd, prefix.data(), prefix.size(), MSG_NOSIGNAL), 0);
    slow.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::thread dribble([&] {
    while (!stop) {
      for (int fd : slow) (void)::send(fd, "a", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(authorized(), 200);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  }
  EXPECT_EQ(unauthorized(), 401);
  for (int fd : slow) EXPECT_TRUE(closed_by_server(fd, 8000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(9));
  stop = true;
  dribble.join();
  for (int fd : slow) ::close(fd);
}

// The status of a raw HTTP/1.1 reply, -1 for none.
int status_of(const std::string& reply) {
  return reply.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(reply.c_str() + 9) : -1;
}

TEST(DashboardE2E, SlowClientsDoNotHoldTheWorkers) {
  TempDir dir;
  ServeProcess serve({"--db", dir.file("k.db"), "--http", "127.0.0.1:0"}, dir.file("serve.log"));
  Dashboard d = dashboard_of(serve);
  ASSERT_FALSE(d.url.empty()) << serve.log();
  const std::string metrics = metrics_request(d);
  expect_slow_clients_cannot_hold(
      d, "GET / HTTP/1.1\r\nX-Slow: ",
      [&] { return status_of(send_raw(d, metrics, /*half_close=*/false, 3000)); },
      [&] {
        return status_of(send_raw(d, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                                  /*half_close=*/false, 3000));
      });
  EXPECT_EQ(serve.wait_exit(0), -2) << "the daemon died:\n" << serve.log();
}

TEST(DashboardE2E, SlowTlsHandshakesDoNotHoldTheWorkers) {
  TempDir dir;
  const std::string certs = dir.file("certs");
  ASSERT_EQ(run_kiln("certs init " + certs).exit_code, 0);
  ServeProcess serve({"--db", dir.file("k.db"), "--certs", certs, "--http", "127.0.0.1:0"},
                     dir.file("serve.log"));
  Dashboard d = dashboard_of(serve);
  ASSERT_EQ(d.url.rfind("https://127.0.0.1:", 0), 0u) << serve.log();
  auto get = [&](bool with_token) {
    httplib::SSLClient https(d.host, d.port);
    https.set_ca_cert_path((certs + "/ca.pem").c_str());
    https.enable_server_certificate_verification(true);
    https.set_connection_timeout(3, 0);
    https.set_read_timeout(3, 0);
    auto res = with_token ? https.Get("/metrics", bearer(d.token)) : https.Get("/metrics");
    return res ? res->status : -1;
  };
  // The header of a 512-byte TLS handshake record, its body then sent a byte at a time.
  expect_slow_clients_cannot_hold(
      d, std::string("\x16\x03\x01\x02\x00", 5), [&] { return get(true); },
      [&] { return get(false); });
  EXPECT_EQ(serve.wait_exit(0), -2) << "the daemon died:\n" << serve.log();
}

// Issue 20: the ?token= redirect echoed the request's raw bytes into Location.
TEST(DashboardE2E, TokenRedirectEchoesNoControlCharacters) {
  TempDir dir;
  ServeProcess serve({"--db", dir.file("k.db"), "--http", "127.0.0.1:0"}, dir.file("serve.log"));
  Dashboard d = dashboard_of(serve);
  ASSERT_FALSE(d.url.empty()) << serve.log();
  std::string reply = send_raw(
      d,
      "GET /\x01x\x7f?a=1&token=" + d.token + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      /*half_close=*/false);
  ASSERT_EQ(reply.rfind("HTTP/1.1 303", 0), 0u) << reply;
  const size_t at = reply.find("\r\nLocation: ");
  ASSERT_NE(at, std::string::npos) << reply;
  const size_t begin = at + 12;
  EXPECT_EQ(reply.substr(begin, reply.find("\r\n", begin) - begin), "/%01x%7F?a=1");
}

TEST(DashboardE2E, BeyondLoopbackOnlyOverHttps) {
  TempDir dir;
  testing::CommandResult r =
      run_kiln("serve --db " + dir.file("k.db") + " --listen 127.0.0.1:0 --http 0.0.0.0:0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("refusing to serve the dashboard beyond loopback without TLS"),
            std::string::npos)
      << r.output;
  r = run_kiln("serve --db " + dir.file("k.db") + " --listen 127.0.0.1:0 --http localhost");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("expected HOST:PORT"), std::string::npos) << r.output;

  // With the daemon's certificates: HTTPS, and the daemon's own bearer token.
  const std::string certs = dir.file("certs");
  ASSERT_EQ(run_kiln("certs init " + certs).exit_code, 0);
  ServeProcess serve({"--db", dir.file("k.db"), "--certs", certs, "--http", "127.0.0.1:0"},
                     dir.file("serve.log"));
  Dashboard d = dashboard_of(serve);
  ASSERT_EQ(d.url.rfind("https://127.0.0.1:", 0), 0u) << serve.log();
  std::ifstream token_file(certs + "/token");
  std::string token;
  std::getline(token_file, token);
  EXPECT_EQ(d.token, token);
  httplib::SSLClient https(d.host, d.port);
  https.set_ca_cert_path((certs + "/ca.pem").c_str());
  https.enable_server_certificate_verification(true);
  auto res = https.Get("/metrics", bearer(token));
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(https.Get("/metrics")->status, 401);
  auto login = https.Get(("/?token=" + token).c_str());
  ASSERT_TRUE(login);
  EXPECT_NE(login->get_header_value("Set-Cookie").find("; Secure"), std::string::npos);
  // Plain HTTP to the HTTPS port gets nothing.
  httplib::Client plain(d.host, d.port);
  plain.set_read_timeout(5, 0);
  auto p = plain.Get("/metrics", bearer(token));
  EXPECT_TRUE(!p || p->status != 200);
}

}  // namespace
}  // namespace kiln
