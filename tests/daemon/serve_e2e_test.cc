// kiln serve end to end, with real processes on 127.0.0.1: jobs submitted with kiln submit, run
// concurrently, SIGKILLed at random moments and restarted on the same store; each job must end
// with exactly its requested trials, none lost, none measured twice, and an intact database.
// Also: priorities, SIGTERM draining, malformed jobs and RPCs, watch and export.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "proto/kiln.grpc.pb.h"
#include "store/job_store.h"
#include "store/open_store.h"
#include "tests/daemon/serve_jobs.h"
#include "tests/daemon/serve_process.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using kiln::testing::run_kiln;
using kiln::testing::ServeProcess;
using kiln::testing::small_job;
using kiln::testing::submit;
using kiln::testing::TempDir;
using ::testing::HasSubstr;

nlohmann::json jobs_json(const std::string& address) {
  testing::CommandResult r = run_kiln("jobs --json --server " + address);
  if (r.exit_code != 0) return nlohmann::json();
  return nlohmann::json::parse(r.output, nullptr, false);
}

std::map<int64_t, std::string> states(const nlohmann::json& jobs) {
  std::map<int64_t, std::string> out;
  if (!jobs.is_array()) return out;
  for (const auto& j : jobs) out[j["id"].get<int64_t>()] = j["state"].get<std::string>();
  return out;
}

// Waits until every job is in a final state (or the timeout passes); the last states seen.
std::map<int64_t, std::string> wait_final(const std::string& address, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::map<int64_t, std::string> s;
  while (std::chrono::steady_clock::now() < deadline) {
    s = states(jobs_json(address));
    bool all_final = !s.empty();
    for (const auto& [id, state] : s) {
      all_final = all_final && (state == "done" || state == "failed" || state == "cancelled");
    }
    if (all_final) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return s;
}

// Every record of job `id`, checked for duplicates: each (task, config) at most once.
struct JobRecords {
  int64_t count = 0;
  int64_t distinct = 0;
  std::vector<int64_t> ids;
};
JobRecords job_records(store::Store& db, int64_t id) {
  store::RecordFilter f;
  f.source = store::job_source(id);
  Result<std::vector<store::Record>> rs = db.records(f);
  EXPECT_TRUE(rs.ok());
  JobRecords out;
  std::set<std::pair<std::string, int64_t>> configs;
  for (const store::Record& r : *rs) {
    configs.insert({r.task_name + " " + r.workload, r.config_index});
    out.ids.push_back(r.id);
  }
  out.count = static_cast<int64_t>(rs->size());
  out.distinct = static_cast<int64_t>(configs.size());
  return out;
}

// The suite's run kills 5 times; KILN_SERVE_KILLS=20 for the acceptance run.
int kills_from_env() {
  const char* n = std::getenv("KILN_SERVE_KILLS");
  return n ? std::atoi(n) : 5;
}

bool any_unfinished(const std::map<int64_t, std::string>& s) {
  for (const auto& [id, state] : s) {
    if (state != "done" && state != "failed" && state != "cancelled") return true;
  }
  return false;
}

TEST(ServeE2E, SurvivesSigkillsWithExactTrials) {
  TempDir dir;
  const std::string db = dir.file("k.db");
  const int kills = kills_from_env();
  // Enough trials that the jobs outlast the kills (about half a second apart).
  const int kTrials = 20 + 12 * kills;
  std::string a = dir.write("a.yaml", small_job("dense:M=64,N=96,K=64", kTrials));
  std::string b = dir.write("b.yaml", small_job("dense:M=64,N=64,K=64", kTrials));
  int generation = 0;
  auto start = [&] {
    return std::make_unique<ServeProcess>(
        std::vector<std::string>{"--db", db, "--jobs", "2"},
        dir.file("serve" + std::to_string(generation++) + ".log"));
  };
  auto serve = start();
  ASSERT_FALSE(serve->address().empty()) << serve->log();
  int64_t ja = submit(serve->address(), a);
  int64_t jb = submit(serve->address(), b);
  ASSERT_GT(ja, 0);
  ASSERT_GT(jb, 0);

  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> pause_ms(100, 800);
  int mid_job = 0;  // kills while a job was still running or queued
  for (int k = 0; k < kills; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
    mid_job += any_unfinished(states(jobs_json(serve->address())));
    // Readers work while the daemon writes.
    testing::CommandResult best = run_kiln("best --db " + db);
    EXPECT_EQ(best.exit_code, 0) << best.output;
    serve->kill(SIGKILL);
    serve->wait_exit(10);
    serve = start();
    ASSERT_FALSE(serve->address().empty()) << serve->log();
  }
  std::map<int64_t, std::string> s = wait_final(serve->address(), 240);
  std::printf("%d SIGKILLs, %d of them while a job was unfinished\n", kills, mid_job);
  EXPECT_GE(mid_job, 1);
  EXPECT_EQ(s[ja], "done") << serve->log();
  EXPECT_EQ(s[jb], "done") << serve->log();
  // Each job's export has its own task's best, and only that.
  testing::CommandResult ea =
      run_kiln("export --job " + std::to_string(ja) + " --server " + serve->address());
  testing::CommandResult eb =
      run_kiln("export --job " + std::to_string(jb) + " --server " + serve->address());
  EXPECT_THAT(ea.output, HasSubstr("[96, 64]"));
  EXPECT_THAT(ea.output, ::testing::Not(HasSubstr("[64, 64], \"float32\"], null")));
  EXPECT_THAT(eb.output, ::testing::Not(HasSubstr("[96, 64]")));
  EXPECT_THAT(ea.output, HasSubstr("exported 1 records of job"));
  EXPECT_THAT(eb.output, HasSubstr("exported 1 records of job"));
  serve->kill(SIGTERM);
  EXPECT_EQ(serve->wait_exit(30), 0);

  auto records = store::open_store(db, /*read_only=*/true);
  ASSERT_TRUE(records.ok()) << records.status().message();
  for (int64_t id : {ja, jb}) {
    JobRecords r = job_records(**records, id);
    EXPECT_EQ(r.count, kTrials) << "job " << id;     // none lost, none extra
    EXPECT_EQ(r.distinct, r.count) << "job " << id;  // none measured twice
  }
  EXPECT_EQ(*(*records)->count(), 2 * kTrials);
  Status integrity = (*records)->check_integrity();
  EXPECT_TRUE(integrity.ok()) << integrity.message();
}

TEST(ServeE2E, HigherPriorityTrialsComeFirst) {
  TempDir dir;
  const std::string db = dir.file("k.db");
  std::string low = dir.write("low.yaml", small_job("dense:M=16,N=32,K=32", 12, 0));
  std::string high = dir.write("high.yaml", small_job("dense:M=16,N=48,K=32", 12, 5));
  ServeProcess serve({"--db", db, "--jobs", "1"}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  int64_t jl = submit(serve.address(), low);
  int64_t jh = submit(serve.address(), high);
  std::map<int64_t, std::string> s = wait_final(serve.address(), 180);
  EXPECT_EQ(s[jl], "done") << serve.log();
  EXPECT_EQ(s[jh], "done") << serve.log();
  auto records = store::open_store(db, true);
  ASSERT_TRUE(records.ok());
  JobRecords l = job_records(**records, jl);
  JobRecords h = job_records(**records, jh);
  ASSERT_EQ(h.count, 12);
  ASSERT_EQ(l.count, 12);
  // The high-priority job's trials are one block: no low-priority trial between its first and
  // last, and the low-priority job finishes after it (it may have measured a batch before the
  // high-priority job was submitted).
  for (int64_t id : l.ids) {
    EXPECT_FALSE(id > h.ids.front() && id < h.ids.back()) << "low-priority record " << id;
  }
  EXPECT_GT(l.ids.back(), h.ids.back());
}

TEST(ServeE2E, SigtermDrainsAndTheJobResumes) {
  TempDir dir;
  const std::string db = dir.file("k.db");
  std::string a = dir.write("a.yaml", small_job("dense:M=16,N=32,K=32", 12));
  auto serve =
      std::make_unique<ServeProcess>(std::vector<std::string>{"--db", db}, dir.file("serve0.log"));
  ASSERT_FALSE(serve->address().empty()) << serve->log();
  int64_t id = submit(serve->address(), a);
  // Wait for the first committed batch, then SIGTERM.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int64_t before = 0;
  while (std::chrono::steady_clock::now() < deadline && before == 0) {
    nlohmann::json j = jobs_json(serve->address());
    if (j.is_array() && !j.empty()) before = j[0]["records"].get<int64_t>();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(before, 0) << serve->log();
  serve->kill(SIGTERM);
  EXPECT_EQ(serve->wait_exit(60), 0) << serve->log();
  EXPECT_THAT(serve->log(), HasSubstr("stopping (SIGTERM)"));
  {
    auto jobs = store::open_job_store(db);
    ASSERT_TRUE(jobs.ok());
    Result<store::JobRow> row = (*jobs)->get(id);
    ASSERT_TRUE(row.ok());
    EXPECT_TRUE(row->state == store::JobState::kQueued || row->state == store::JobState::kDone)
        << store::job_state_name(row->state);
  }
  serve =
      std::make_unique<ServeProcess>(std::vector<std::string>{"--db", db}, dir.file("serve1.log"));
  std::map<int64_t, std::string> s = wait_final(serve->address(), 120);
  EXPECT_EQ(s[id], "done") << serve->log();
  auto records = store::open_store(db, true);
  JobRecords r = job_records(**records, id);
  EXPECT_EQ(r.count, 12);
  EXPECT_EQ(r.distinct, 12);

  // watch of a finished job prints its status and exits 0; export writes its best per task.
  testing::CommandResult w =
      run_kiln("watch " + std::to_string(id) + " --server " + serve->address());
  EXPECT_EQ(w.exit_code, 0) << w.output;
  EXPECT_THAT(w.output, HasSubstr("done"));
  EXPECT_THAT(w.output, HasSubstr("dense_nopack.x86"));
  std::string log = dir.file("best.log");
  testing::CommandResult e = run_kiln("export --job " + std::to_string(id) + " --server " +
                                      serve->address() + " -o " + log);
  EXPECT_EQ(e.exit_code, 0) << e.output;
  std::ifstream in(log);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  nlohmann::json tvm = nlohmann::json::parse(line, nullptr, false);
  ASSERT_FALSE(tvm.is_discarded()) << line;
  EXPECT_EQ(tvm["input"][1], "dense_nopack.x86");
}

// The time a job's budget counts is the time spent tuning it, over every run of the daemon.
TEST(ServeE2E, ATimeBudgetCountsTheTimeSpentOverRestarts) {
  TempDir dir;
  const std::string db = dir.file("k.db");
  std::string job = small_job("dense:M=64,N=96,K=64", 100000);
  job.replace(job.find("budget: {trials: 100000}"), std::string("budget: {trials: 100000}").size(),
              "budget: {time: 3s}");
  std::string a = dir.write("a.yaml", job);
  auto serve =
      std::make_unique<ServeProcess>(std::vector<std::string>{"--db", db}, dir.file("serve0.log"));
  ASSERT_FALSE(serve->address().empty()) << serve->log();
  int64_t id = submit(serve->address(), a);
  std::this_thread::sleep_for(std::chrono::milliseconds(1800));
  serve->kill(SIGKILL);
  serve->wait_exit(10);
  double spent_before = 0;
  {
    auto jobs = store::open_job_store(db);
    ASSERT_TRUE(jobs.ok());
    spent_before = (*jobs)->get(id)->seconds;
  }
  EXPECT_GT(spent_before, 0.5);
  EXPECT_LT(spent_before, 3);
  auto restart = std::chrono::steady_clock::now();
  serve =
      std::make_unique<ServeProcess>(std::vector<std::string>{"--db", db}, dir.file("serve1.log"));
  std::map<int64_t, std::string> s = wait_final(serve->address(), 60);
  EXPECT_EQ(s[id], "done") << serve->log();
  double second_run =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - restart).count();
  nlohmann::json jobs = jobs_json(serve->address());
  ASSERT_TRUE(jobs.is_array() && jobs.size() == 1u);
  double spent = jobs[0]["seconds"].get<double>();
  // The budget is spent once in all (the batch running when it runs out is finished: under load
  // that may take a second or two), and the second run only tuned what the first one left.
  EXPECT_GE(spent, 3.0);
  EXPECT_LT(spent, 6.0);
  EXPECT_LT(second_run, 3.0 - spent_before + 4.0);
  EXPECT_THAT(jobs[0]["reason"].get<std::string>(), HasSubstr("time budget spent"));
}

TEST(ServeE2E, PauseResumeAndCancelFromTheCommandLine) {
  TempDir dir;
  const std::string db = dir.file("k.db");
  std::string a = dir.write("a.yaml", small_job("dense:M=64,N=96,K=64", 400));
  ServeProcess serve({"--db", db}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  const std::string server = " --server " + serve.address();
  int64_t id = submit(serve.address(), a);
  const std::string job = std::to_string(id);
  auto wait_state = [&](const std::string& want) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (states(jobs_json(serve.address()))[id] == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  ASSERT_TRUE(wait_state("running")) << serve.log();
  testing::CommandResult r = run_kiln("pause " + job + server);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(wait_state("paused")) << serve.log();
  int64_t records = jobs_json(serve.address())[0]["records"].get<int64_t>();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_EQ(jobs_json(serve.address())[0]["records"].get<int64_t>(), records);  // nothing runs
  r = run_kiln("pause " + job + server);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("is paused"));
  r = run_kiln("resume " + job + server);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(wait_state("running")) << serve.log();
  r = run_kiln("cancel " + job + server);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(wait_state("cancelled")) << serve.log();
  r = run_kiln("cancel " + job + server);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("cancelled already"));
  // watch of a cancelled job: its status, exit code 1.
  r = run_kiln("watch " + job + server);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cancelled"));
}

TEST(ServeE2E, AJobWhoseModelDisappearsFailsAloneWithTheReason) {
  TempDir dir;
  const std::string db = dir.file("k.db");
  std::string a = dir.write("a.yaml", small_job("dense:M=16,N=32,K=32", 6));
  std::filesystem::copy_file(std::string(KILN_SHARED_DIR) + "/models/mlp/mlp.onnx",
                             dir.file("mlp.onnx"));
  std::string m = dir.write(
      "m.yaml", "model: " + dir.file("mlp.onnx") + "\ntuner: random\nbudget: {trials: 4}\n");
  ServeProcess serve({"--db", db, "--jobs", "1"}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  int64_t ja = submit(serve.address(), a);
  int64_t jm = submit(serve.address(), m);
  std::filesystem::remove(dir.file("mlp.onnx"));  // before its turn: job a holds the only slot
  std::map<int64_t, std::string> s = wait_final(serve.address(), 120);
  EXPECT_EQ(s[ja], "done") << serve.log();
  EXPECT_EQ(s[jm], "failed") << serve.log();
  nlohmann::json jobs = jobs_json(serve.address());
  ASSERT_TRUE(jobs.is_array());
  std::string reason;
  for (const auto& j : jobs) {
    if (j["id"] == jm) reason = j["reason"];
  }
  EXPECT_THAT(reason, HasSubstr("mlp.onnx"));
  testing::CommandResult table = run_kiln("jobs --server " + serve.address());
  EXPECT_THAT(table.output, HasSubstr("failed"));
}

// A farm job whose key has no runner (they are all gone): its first batch waits run_on.runner_wait
// for one, is recorded as lost, and the job fails with the reason while a local job finishes.
TEST(ServeE2E, AFarmJobWhoseRunnersAreGoneFailsAloneWithTheReason) {
  TempDir dir;
  const std::string certs = dir.file("certs");
  ASSERT_EQ(run_kiln("certs init " + certs).exit_code, 0);
  ServeProcess tracker({"--certs", certs}, dir.file("tracker.log"), "tracker");
  ASSERT_FALSE(tracker.address().empty()) << tracker.log();
  std::string farm =
      dir.write("farm.yaml", small_job("dense:M=16,N=16,K=16", 8) + "run_on: {tracker: \"" +
                                 tracker.address() + "\", key: gone, certs: " + certs +
                                 ", runner_wait: 1}\n");
  std::string local = dir.write("local.yaml", small_job("dense:M=16,N=32,K=32", 6));
  ServeProcess serve({"--db", dir.file("k.db"), "--jobs", "2"}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  int64_t jf = submit(serve.address(), farm);
  int64_t jl = submit(serve.address(), local);
  std::map<int64_t, std::string> s = wait_final(serve.address(), 120);
  EXPECT_EQ(s[jf], "failed") << serve.log();
  EXPECT_EQ(s[jl], "done") << serve.log();
  std::string reason;
  for (const auto& j : jobs_json(serve.address())) {
    if (j["id"] == jf) reason = j["reason"];
  }
  EXPECT_THAT(reason, HasSubstr("run_on: the farm's runners are gone"));
  EXPECT_THAT(reason, HasSubstr("no runner of key 'gone' came free"));
}

// A model job: its tasks tuned under one budget, then the exports it asked for: the TVM log of
// its tasks' best records and the compiled model, which `kiln run` runs.
TEST(ServeE2E, AModelJobWritesItsExportsWhenDone) {
  TempDir dir;
  const std::string model = std::string(KILN_SHARED_DIR) + "/models/mlp/mlp.onnx";
  std::string m = dir.write(
      "m.yaml", "model: " + model +
                    "\nops: [dense]\ntuner: random\nbudget: {trials_per_task: 2}\n"
                    "measure: {number: 1, repeat: 1, cooldown_interval: 0, threads: 1, "
                    "n_parallel: 1}\nexport: {tvm_log: out/mlp.log, compiled_model: mlp.kiln}\n");
  std::filesystem::create_directory(dir.file("out"));
  ServeProcess serve({"--db", dir.file("k.db")}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  // Relative export paths are relative to where kiln submit runs: the test's directory.
  const std::string submit_in_dir = "cd '" + dir.path() + "' && " + KILN_BINARY +
                                    " submit m.yaml --server " + serve.address() + " 2>&1";
  ASSERT_EQ(std::system(submit_in_dir.c_str()), 0);
  std::map<int64_t, std::string> s = wait_final(serve.address(), 180);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.begin()->second, "done") << serve.log();
  std::ifstream log(dir.file("out/mlp.log"));
  int lines = 0;
  for (std::string line; std::getline(log, line);) {
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
    ++lines;
  }
  EXPECT_GE(lines, 3);  // one per task with a successful config: 3 dense layers x 2 templates
  EXPECT_LE(lines, 6);
  // The daemon's log says where each export went, on timestamped lines.
  const std::string logged = serve.log();
  EXPECT_THAT(logged, HasSubstr("kiln serve info: job 1: exported its TVM log (" +
                                std::to_string(lines) + " records) to " + dir.file("out/mlp.log")));
  EXPECT_THAT(logged, HasSubstr("kiln serve info: job 1: exported its compiled model to " +
                                dir.file("mlp.kiln")));
  EXPECT_THAT(logged, ::testing::ContainsRegex("(^|\n)[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
                                               "[0-9]{2}\\.[0-9]{3}Z kiln serve info: job 1: "
                                               "started"));
  testing::CommandResult run =
      run_kiln("run " + dir.file("mlp.kiln") + " --input input=" + std::string(KILN_SHARED_DIR) +
               "/models/mlp/input.bin");
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

TEST(ServeE2E, RejectsMalformedJobsAndRpcsNamingTheField) {
  TempDir dir;
  ServeProcess serve({"--db", dir.file("k.db")}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  const std::string server = " --server " + serve.address();

  std::string missing = dir.write("missing.yaml", "model: nowhere.onnx\n");
  testing::CommandResult r = run_kiln("submit " + missing + server);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("model: no such file"));
  std::string target = dir.write(
      "target.yaml", "workloads: [\"dense:M=16,N=16,K=16\"]\ntarget: 'llvm -mcpu=nocpu'\n");
  r = run_kiln("submit " + target + server);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("target: "));
  std::string negative =
      dir.write("neg.yaml", "workloads: [\"dense:M=16,N=16,K=16\"]\nbudget: {trials: -3}\n");
  r = run_kiln("submit " + negative + server);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("budget.trials"));

  // The same checks on the server, through the raw RPC (a client that skipped them).
  auto stub =
      v1::Tuner::NewStub(grpc::CreateChannel(serve.address(), grpc::InsecureChannelCredentials()));
  auto call = [&](auto method, const auto& req, auto* reply) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*stub).*method)(&ctx, req, reply);
  };
  v1::SubmitJobRequest submit_req;
  v1::SubmitJobReply submit_reply;
  grpc::Status st = call(&v1::Tuner::Stub::SubmitJob, submit_req, &submit_reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("spec_yaml"));
  submit_req.set_spec_yaml("workloads: [\"dense:M=16,N=16,K=16\"]\nbudget: {trials: -3}\n");
  st = call(&v1::Tuner::Stub::SubmitJob, submit_req, &submit_reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("budget.trials"));
  submit_req.set_spec_yaml("workloads: [\"dense:M=16,N=16,K=16\"]\n");
  submit_req.set_base_dir("relative/dir");
  st = call(&v1::Tuner::Stub::SubmitJob, submit_req, &submit_reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("base_dir"));

  v1::JobRef ref;
  v1::JobStatus status;
  ref.set_job_id(0);
  st = call(&v1::Tuner::Stub::GetJob, ref, &status);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("job_id"));
  ref.set_job_id(42);
  st = call(&v1::Tuner::Stub::GetJob, ref, &status);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  v1::ExportJobRequest export_req;
  v1::ExportJobReply export_reply;
  export_req.set_job_id(1);
  export_req.set_format("csv");
  st = call(&v1::Tuner::Stub::ExportJob, export_req, &export_reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("format"));

  // One daemon per store.
  ServeProcess second({"--db", dir.file("k.db")}, dir.file("serve2.log"));
  EXPECT_TRUE(second.address().empty());
  EXPECT_EQ(second.wait_exit(10), 2);
  EXPECT_THAT(second.log(), HasSubstr("is served by another kiln serve already"));

  r = run_kiln("watch abc" + server);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("JOB: expected a job id"));
  r = run_kiln("cancel 77" + server);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("no job 77"));
}

}  // namespace
}  // namespace kiln
