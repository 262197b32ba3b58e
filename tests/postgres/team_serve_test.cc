// A team's daemons: several `kiln serve` processes on one real PostgreSQL store
// (tests/postgres/pg_server.h) share one job queue. A daemon SIGKILLed mid-job again and again
// (and once left dead) loses nothing: its jobs are taken over when their leases expire, every
// job ends with exactly its budget in records, none measured twice. Requests (cancel, pause)
// reach the daemon that runs the job; priorities hold across daemons; the database restarted
// mid-job is reconnected to; a database that stays down fails the jobs with the reason, never a
// hang or a crash.
//
// The daemons here share this machine's cores (each with a local runner), which a real team
// would not do: these tests check ownership and counts, not timings.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "store/job_store.h"
#include "store/open_store.h"
#include "tests/daemon/serve_jobs.h"
#include "tests/daemon/serve_process.h"
#include "tests/postgres/pg_server.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using kiln::testing::PgServer;
using kiln::testing::run_kiln;
using kiln::testing::ServeProcess;
using kiln::testing::small_job;
using kiln::testing::submit;
using kiln::testing::TempDir;

struct JobLine {
  std::string state;
  std::string host;
  std::string reason;
  int64_t records = 0;
};

// `kiln jobs --json` through the daemon at `address`; empty when it cannot answer.
std::map<int64_t, JobLine> jobs_of(const std::string& address) {
  std::map<int64_t, JobLine> out;
  testing::CommandResult r = run_kiln("jobs --json --server " + address);
  if (r.exit_code != 0) return out;
  nlohmann::json all = nlohmann::json::parse(r.output, nullptr, false);
  if (!all.is_array()) return out;
  for (const auto& j : all) {
    out[j["id"].get<int64_t>()] = {j["state"].get<std::string>(), j["host"].get<std::string>(),
                                   j["reason"].get<std::string>(), j["records"].get<int64_t>()};
  }
  return out;
}

bool all_final(const std::map<int64_t, JobLine>& jobs) {
  if (jobs.empty()) return false;
  for (const auto& [id, j] : jobs) {
    if (j.state != "done" && j.state != "failed" && j.state != "cancelled") return false;
  }
  return true;
}

// Polls `address` until `pred` holds of its jobs (true) or `timeout_s` passes (false).
template <class Pred>
bool wait_for(const std::string& address, double timeout_s, Pred pred,
              std::map<int64_t, JobLine>* last = nullptr) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::map<int64_t, JobLine> jobs = jobs_of(address);
    if (last) *last = jobs;
    if (pred(jobs)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

// What kiln jobs names a daemon by: HOST:PID.
std::string host_of(const ServeProcess& p) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(p.pid());
}

class TeamServe : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = PgServer::shared();
    if (!server_) GTEST_SKIP() << PgServer::skip_reason();
    uri_ = server_->new_database();
  }
  std::unique_ptr<ServeProcess> start(const std::string& name, const std::string& lease = "2",
                                      int jobs = 1) {
    return std::make_unique<ServeProcess>(
        std::vector<std::string>{"--db", uri_, "--jobs", std::to_string(jobs), "--job-lease", lease,
                                 "--export-dir", dir_.path()},
        dir_.file(name + std::to_string(generation_++) + ".log"));
  }
  // Every record of job `id`: (count, distinct configs).
  std::pair<int64_t, int64_t> records_of(int64_t id) {
    auto store = store::open_store(uri_, /*read_only=*/true);
    EXPECT_TRUE(store.ok()) << store.status().message();
    if (!store.ok()) return {-1, -1};
    store::RecordFilter f;
    f.source = store::job_source(id);
    auto rs = (*store)->records(f);
    EXPECT_TRUE(rs.ok());
    std::set<std::pair<std::string, int64_t>> configs;
    for (const store::Record& r : *rs) configs.insert({r.workload, r.config_index});
    return {static_cast<int64_t>(rs->size()), static_cast<int64_t>(configs.size())};
  }

  PgServer* server_ = nullptr;
  std::string uri_;
  TempDir dir_;
  int generation_ = 0;
};

TEST_F(TeamServe, ADaemonKilledMidJobLosesNothingAndADeadOnesJobIsFinishedByTheOther) {
  const int kTrials = 150;
  const std::vector<std::string> workloads = {"dense:M=64,N=96,K=64", "dense:M=64,N=64,K=64",
                                              "dense:M=32,N=64,K=64"};
  auto a = start("a");
  auto b = start("b");
  ASSERT_FALSE(a->address().empty()) << a->log();
  ASSERT_FALSE(b->address().empty()) << b->log();
  std::vector<int64_t> ids;
  for (size_t i = 0; i < workloads.size(); ++i) {
    ids.push_back(submit(a->address(), dir_.write("j" + std::to_string(i) + ".yaml",
                                                  small_job(workloads[i], kTrials))));
  }

  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> pause_ms(100, 700);
  int64_t dead_job = 0;
  for (int kill = 0; kill < 6; ++kill) {
    // Mid-job: A runs a job, as B (the other daemon) lists it.
    const std::string a_host = host_of(*a);
    std::map<int64_t, JobLine> seen;
    ASSERT_TRUE(wait_for(
        b->address(), 60,
        [&](const auto& jobs) {
          for (const auto& [id, j] : jobs) {
            if (j.state == "running" && j.host == a_host) return true;
          }
          return false;
        },
        &seen))
        << "kill " << kill << ": A never ran a job\n"
        << a->log();
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
    for (const auto& [id, j] : jobs_of(b->address())) {
      if (j.state == "running" && j.host == a_host) dead_job = id;
    }
    a->kill(SIGKILL);
    a->wait_exit(10);
    if (kill < 5) {
      a = start("a");
      ASSERT_FALSE(a->address().empty()) << a->log();
    }
  }
  ASSERT_GT(dead_job, 0);
  std::map<int64_t, JobLine> last;
  ASSERT_TRUE(wait_for(b->address(), 400, all_final, &last)) << b->log();
  for (int64_t id : ids) {
    EXPECT_EQ(last[id].state, "done") << "job " << id << ": " << last[id].reason;
    auto [count, distinct] = records_of(id);
    EXPECT_EQ(count, kTrials) << "job " << id;   // none lost, none extra
    EXPECT_EQ(distinct, count) << "job " << id;  // none measured twice
  }
  // The job A died with was taken over by B, which finished it.
  const std::string log = b->log();
  EXPECT_NE(log.find("job " + std::to_string(dead_job) + ": started on " + host_of(*b) +
                     " (taken over from "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("job " + std::to_string(dead_job) + ": done"), std::string::npos) << log;
  b->kill(SIGTERM);
  EXPECT_EQ(b->wait_exit(30), 0);
  if (HasFailure()) std::printf("%s\n", b->log().c_str());
}

TEST_F(TeamServe, RequestsReachTheDaemonThatRunsTheJobAndPrioritiesHoldAcrossDaemons) {
  auto a = start("a", "10");
  auto b = start("b", "10");
  ASSERT_FALSE(a->address().empty()) << a->log();
  ASSERT_FALSE(b->address().empty()) << b->log();
  const int64_t low1 =
      submit(a->address(), dir_.write("l1.yaml", small_job("dense:M=64,N=96,K=64", 5000)));
  const int64_t low2 =
      submit(a->address(), dir_.write("l2.yaml", small_job("dense:M=64,N=64,K=64", 5000)));
  ASSERT_TRUE(wait_for(a->address(), 60,
                       [&](const auto& jobs) {
                         return jobs.count(low1) && jobs.at(low1).state == "running" &&
                                jobs.count(low2) && jobs.at(low2).state == "running" &&
                                jobs.at(low1).host != jobs.at(low2).host;
                       }))
      << a->log() << b->log();

  // Both slots of the team are full: a job of higher priority preempts one of the low ones.
  const int64_t high =
      submit(b->address(), dir_.write("h.yaml", small_job("dense:M=32,N=64,K=64", 20, 5)));
  std::map<int64_t, JobLine> seen;
  ASSERT_TRUE(wait_for(
      a->address(), 60,
      [&](const auto& jobs) { return jobs.count(high) && jobs.at(high).state == "done"; }, &seen))
      << a->log() << b->log();
  EXPECT_EQ(records_of(high).first, 20);

  // Cancel and pause through the daemon that does not run the job.
  std::map<int64_t, JobLine> now = jobs_of(a->address());
  ASSERT_TRUE(wait_for(
      a->address(), 60,
      [&](const auto& jobs) {
        return jobs.at(low1).state == "running" && jobs.at(low2).state == "running";
      },
      &now));
  const std::string a_host = host_of(*a);
  const int64_t on_b = now[low1].host == a_host ? low2 : low1;
  const int64_t on_a = on_b == low1 ? low2 : low1;
  testing::CommandResult c =
      run_kiln("cancel " + std::to_string(on_b) + " --server " + a->address());
  EXPECT_EQ(c.exit_code, 0) << c.output;
  testing::CommandResult p =
      run_kiln("pause " + std::to_string(on_a) + " --server " + b->address());
  EXPECT_EQ(p.exit_code, 0) << p.output;
  ASSERT_TRUE(wait_for(
      a->address(), 60,
      [&](const auto& jobs) {
        return jobs.at(on_b).state == "cancelled" && jobs.at(on_a).state == "paused";
      },
      &now))
      << a->log() << b->log();
  EXPECT_EQ(now[on_b].reason, "cancelled on request");
  EXPECT_EQ(now[on_a].reason, "paused on request");
  EXPECT_EQ(now[on_a].host, "");
  // Resumed through either, it runs again on one of them.
  testing::CommandResult r =
      run_kiln("resume " + std::to_string(on_a) + " --server " + b->address());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(wait_for(a->address(), 60, [&](const auto& jobs) {
    return jobs.at(on_a).state == "running" && !jobs.at(on_a).host.empty();
  }));
  auto [count, distinct] = records_of(on_a);
  EXPECT_EQ(count, distinct);
  if (HasFailure()) std::printf("A:\n%s\nB:\n%s\n", a->log().c_str(), b->log().c_str());
  // A job's exports must go under --export-dir: there is no store directory.
  const std::string bad = dir_.write(
      "bad.yaml", small_job("dense:M=8,N=8,K=8", 2) + "export: {tvm_log: /tmp/kiln-team.log}\n");
  testing::CommandResult refused = run_kiln("submit --server " + a->address() + " " + bad);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("outside the directories"), std::string::npos) << refused.output;
}

TEST_F(TeamServe, TheDatabaseRestartedMidJobIsReconnectedTo) {
  const int kTrials = 60;
  auto a = start("a", "30");
  auto b = start("b", "30");
  ASSERT_FALSE(a->address().empty()) << a->log();
  ASSERT_FALSE(b->address().empty()) << b->log();
  const int64_t j1 =
      submit(a->address(), dir_.write("1.yaml", small_job("dense:M=64,N=96,K=64", kTrials)));
  const int64_t j2 =
      submit(a->address(), dir_.write("2.yaml", small_job("dense:M=64,N=64,K=64", kTrials)));
  ASSERT_TRUE(wait_for(a->address(), 60,
                       [&](const auto& jobs) {
                         return jobs.count(j1) && jobs.count(j2) && jobs.at(j1).records > 3 &&
                                jobs.at(j2).records > 3;
                       }))
      << a->log() << b->log();
  server_->restart();
  std::map<int64_t, JobLine> last;
  ASSERT_TRUE(wait_for(a->address(), 300, all_final, &last)) << a->log() << b->log();
  for (int64_t id : {j1, j2}) {
    EXPECT_EQ(last[id].state, "done") << last[id].reason;
    auto [count, distinct] = records_of(id);
    EXPECT_EQ(count, kTrials);
    EXPECT_EQ(distinct, count);
  }
  EXPECT_NE((a->log() + b->log()).find("reconnected"), std::string::npos);
}

TEST_F(TeamServe, ADatabaseThatStaysDownFailsTheJobsWithTheReasonAfterABoundedWait) {
  ::setenv("KILN_STORE_RECONNECT_S", "3", 1);  // the daemons' reconnection window
  // A long lease: the store's return finds the jobs still theirs, so their ends are written.
  auto a = start("a", "300");
  auto b = start("b", "300");
  ::unsetenv("KILN_STORE_RECONNECT_S");
  ASSERT_FALSE(a->address().empty()) << a->log();
  ASSERT_FALSE(b->address().empty()) << b->log();
  const int64_t j1 =
      submit(a->address(), dir_.write("1.yaml", small_job("dense:M=64,N=96,K=64", 5000)));
  const int64_t j2 =
      submit(a->address(), dir_.write("2.yaml", small_job("dense:M=64,N=64,K=64", 5000)));
  ASSERT_TRUE(wait_for(a->address(), 60,
                       [&](const auto& jobs) {
                         return jobs.count(j1) && jobs.count(j2) && jobs.at(j1).records > 0 &&
                                jobs.at(j2).records > 0;
                       }))
      << a->log() << b->log();
  server_->stop();
  // Each daemon fails its job once the window has passed, and says why; it stays up and
  // answers (with an error naming the store) instead of hanging.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto failed_in = [](const std::string& log) {
    return log.find(": failed: ") != std::string::npos;
  };
  while (std::chrono::steady_clock::now() < deadline &&
         !(failed_in(a->log()) && failed_in(b->log()))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(failed_in(a->log())) << a->log();
  EXPECT_TRUE(failed_in(b->log())) << b->log();
  auto t0 = std::chrono::steady_clock::now();
  testing::CommandResult listing = run_kiln("jobs --server " + a->address());
  EXPECT_NE(listing.exit_code, 0);
  EXPECT_NE(listing.output.find("record store"), std::string::npos) << listing.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30);
  EXPECT_EQ(a->wait_exit(0), -2);  // still running
  EXPECT_EQ(b->wait_exit(0), -2);

  // Back: the ends are written, with the reason.
  server_->start();
  std::map<int64_t, JobLine> last;
  ASSERT_TRUE(wait_for(a->address(), 60, all_final, &last)) << a->log() << b->log();
  for (int64_t id : {j1, j2}) {
    EXPECT_EQ(last[id].state, "failed");
    EXPECT_NE(last[id].reason.find("record store"), std::string::npos) << last[id].reason;
    auto [count, distinct] = records_of(id);
    EXPECT_EQ(count, distinct);
  }
  a->kill(SIGTERM);
  b->kill(SIGTERM);
  EXPECT_EQ(a->wait_exit(60), 0) << a->log();
  EXPECT_EQ(b->wait_exit(60), 0) << b->log();
}

}  // namespace
}  // namespace kiln
