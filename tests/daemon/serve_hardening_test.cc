// kiln serve against a hostile or careless user (issue 20), end to end with real processes on
// 127.0.0.1: exports that aim at the store, a directory, a planted symlink or outside the allowed
// directories; a second daemon on the same store file through another path; jobs big enough to
// overflow a listing; a model that crashes ONNX's import; a model file that is not ONNX.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "proto/kiln.grpc.pb.h"
#include "tests/daemon/serve_process.h"
#include "tests/onnx_models.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using kiln::testing::OnnxModel;
using kiln::testing::run_kiln;
using kiln::testing::ServeProcess;
using kiln::testing::TempDir;
using ::testing::HasSubstr;

// One dense workload, the random tuner, one timed run per config: a trial costs about a build.
std::string small_job(int trials, const std::string& extra = "") {
  return "workloads: [\"dense:M=16,N=16,K=16\"]\ntemplate: dense_nopack.x86\ntuner: random\n"
         "budget: {trials: " +
         std::to_string(trials) +
         "}\nmeasure: {number: 1, repeat: 1, cooldown_interval: 0, timeout: 5, threads: 1, "
         "n_parallel: 1, build_timeout: 20}\n" +
         extra;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json jobs_json(const std::string& address) {
  testing::CommandResult r = run_kiln("jobs --json --server " + address);
  if (r.exit_code != 0) return nlohmann::json();
  return nlohmann::json::parse(r.output, nullptr, false);
}

// The jobs' states and reasons once every job is final (or the timeout passed).
std::map<int64_t, std::pair<std::string, std::string>> wait_final(const std::string& address,
                                                                  double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::map<int64_t, std::pair<std::string, std::string>> s;
  while (std::chrono::steady_clock::now() < deadline) {
    s.clear();
    nlohmann::json jobs = jobs_json(address);
    bool all_final = jobs.is_array() && !jobs.empty();
    for (const auto& j : jobs.is_array() ? jobs : nlohmann::json::array()) {
      std::string state = j["state"];
      s[j["id"].get<int64_t>()] = {state, j["reason"].get<std::string>()};
      all_final = all_final && (state == "done" || state == "failed" || state == "cancelled");
    }
    if (all_final) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return s;
}

testing::CommandResult submit(const std::string& address, const std::string& file) {
  return run_kiln("submit --server " + address + " " + file);
}

// A 1x3x8x8 input through one 3x3 convolution with these strides.
std::string conv_model(const std::string& path, int64_t stride) {
  OnnxModel m;
  m.input("X", {1, 3, 8, 8});
  m.weight("W", {4, 3, 3, 3});
  onnx::NodeProto* conv = m.node("Conv", {"X", "W"}, {"Y"}, "conv");
  OnnxModel::attr(conv, "strides", std::vector<int64_t>{stride, stride});
  OnnxModel::attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  m.output("Y");
  std::ofstream out(path, std::ios::binary);
  m.proto().SerializeToOstream(&out);
  return path;
}

TEST(ServeHardening, ExportsGoOnlyToRegularFilesInTheAllowedDirectories) {
  TempDir dir;
  TempDir elsewhere;
  std::filesystem::create_directory(dir.file("out"));
  ServeProcess serve({"--db", dir.file("k.db")}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  auto refused = [&](const std::string& path, const std::string& why) {
    std::string job = dir.write("bad.yaml", small_job(2, "export: {tvm_log: '" + path + "'}\n"));
    testing::CommandResult r = submit(serve.address(), job);
    EXPECT_EQ(r.exit_code, 2) << path << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("export.tvm_log: " + path)) << path;
    EXPECT_THAT(r.output, HasSubstr(why)) << path;
  };
  refused(dir.file("k.db"), "is the record store");
  refused(dir.file("k.db-wal"), "a file kept beside the record store");
  refused(dir.file("out"), "is a directory");
  refused(elsewhere.file("x.log"), "outside the directories this kiln serve writes exports to");
  // The store through a symlink or a hard link is the store.
  std::filesystem::create_symlink(dir.file("k.db"), dir.file("out/alias.db"));
  refused(dir.file("out/alias.db"), "is the record store");
  ASSERT_EQ(::link(dir.file("k.db").c_str(), dir.file("out/hard.db").c_str()), 0);
  refused(dir.file("out/hard.db"), "is the record store");
  // A directory that leads outside through a symlink is outside.
  std::filesystem::create_directory_symlink(elsewhere.path(), dir.file("out/escape"));
  refused(dir.file("out/escape/x.log"), "outside the directories");
  std::filesystem::remove(dir.file("out/hard.db"));

  // A symlink planted at the old temporary name is never followed; the export is a regular file.
  const std::string victim = elsewhere.write("victim", "precious\n");
  std::filesystem::create_symlink(victim, dir.file("out/good.log.tmp"));
  std::string good = dir.write(
      "good.yaml", small_job(2, "export: {tvm_log: '" + dir.file("out/good.log") + "'}\n"));
  ASSERT_EQ(submit(serve.address(), good).exit_code, 0);
  // Written at the end: a symlink planted at the export's own path meanwhile is not replaced.
  std::string late = dir.write(
      "late.yaml", small_job(4, "export: {tvm_log: '" + dir.file("out/late.log") + "'}\n"));
  ASSERT_EQ(submit(serve.address(), late).exit_code, 0);
  std::filesystem::create_symlink(victim, dir.file("out/late.log"));
  auto s = wait_final(serve.address(), 120);
  ASSERT_EQ(s.size(), 2u) << serve.log();
  EXPECT_EQ(s[1].first, "done") << s[1].second;
  EXPECT_EQ(s[2].first, "failed");
  EXPECT_THAT(s[2].second, HasSubstr("is a symbolic link"));
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_TRUE(
      std::filesystem::is_regular_file(std::filesystem::symlink_status(dir.file("out/good.log"))));
  EXPECT_THAT(read_file(dir.file("out/good.log")), HasSubstr("dense_nopack.x86"));
  // The store is intact.
  testing::CommandResult best = run_kiln("export --db " + dir.file("k.db") + " --format tvm");
  EXPECT_EQ(best.exit_code, 0) << best.output;

  // --export-dir moves the allowed place.
  ServeProcess other({"--db", elsewhere.file("o.db"), "--export-dir", dir.file("out")},
                     elsewhere.file("serve.log"));
  ASSERT_FALSE(other.address().empty()) << other.log();
  std::string beside = dir.write(
      "beside.yaml", small_job(1, "export: {tvm_log: '" + elsewhere.file("x.log") + "'}\n"));
  testing::CommandResult r = submit(other.address(), beside);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("outside the directories"));
  std::string in_out =
      dir.write("in.yaml", small_job(1, "export: {tvm_log: '" + dir.file("out/in.log") + "'}\n"));
  EXPECT_EQ(submit(other.address(), in_out).exit_code, 0);
}

TEST(ServeHardening, ASecondDaemonOnTheSameStoreFileIsRefusedWhateverThePath) {
  TempDir dir;
  ServeProcess first({"--db", dir.file("y.db")}, dir.file("first.log"));
  ASSERT_FALSE(first.address().empty()) << first.log();
  std::filesystem::create_symlink(dir.file("y.db"), dir.file("link.db"));
  ASSERT_EQ(::link(dir.file("y.db").c_str(), dir.file("hard.db").c_str()), 0);
  int n = 0;
  for (const std::string& path :
       {dir.file("link.db"), dir.file("hard.db"), dir.path() + "/./y.db"}) {
    const std::string log = dir.file("second" + std::to_string(n++) + ".log");
    ServeProcess second({"--db", path}, log);
    EXPECT_TRUE(second.address().empty()) << path;
    EXPECT_EQ(second.wait_exit(10), 2) << path;
    EXPECT_THAT(second.log(), HasSubstr("is served by another kiln serve already")) << path;
  }
  // The first one still serves.
  EXPECT_TRUE(jobs_json(first.address()).is_array());
}

TEST(ServeHardening, AJobSpecIsCappedAndAnyNumberOfBigJobsStillLists) {
  TempDir dir;
  ServeProcess serve({"--db", dir.file("k.db"), "--jobs", "1"}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  auto stub =
      v1::Tuner::NewStub(grpc::CreateChannel(serve.address(), grpc::InsecureChannelCredentials()));
  auto submit_raw = [&](const std::string& yaml, v1::SubmitJobReply* reply) {
    v1::SubmitJobRequest req;
    req.set_spec_yaml(yaml);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return stub->SubmitJob(&ctx, req, reply);
  };
  v1::SubmitJobReply reply;
  grpc::Status st = submit_raw(small_job(1) + "# " + std::string(300 * 1024, 'x') + "\n", &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("at most 262144 (256 KiB)"));

  // 20 jobs of 250 KiB, each with a 120 KiB name: 5 MB of specs and 2.4 MB of names. They share
  // one workload, so all but the first are done at once; listed they stay, whatever their state.
  const int kJobs = 20;
  for (int i = 0; i < kJobs; ++i) {
    std::string yaml = "name: " + std::string(120 * 1024, 'a' + i % 26) + "\n" + small_job(1) +
                       "# " + std::string(125 * 1024, 'x') + "\n";
    ASSERT_LE(yaml.size(), 256u * 1024);
    st = submit_raw(yaml, &reply);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  testing::CommandResult r = run_kiln("jobs --json --server " + serve.address());
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 500);
  nlohmann::json jobs = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(jobs.is_array());
  ASSERT_EQ(jobs.size(), static_cast<size_t>(kJobs));
  for (int i = 0; i < kJobs; ++i) {
    EXPECT_EQ(jobs[i]["id"], i + 1);
    EXPECT_EQ(jobs[i]["name"].get<std::string>().size(), 120u * 1024);
  }
  // A raw page stays small and says where the next one starts.
  v1::ListJobsRequest req;
  v1::JobList page;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->ListJobs(&ctx, req, &page).ok());
  EXPECT_LT(page.ByteSizeLong(), 2u << 20);
  EXPECT_GT(page.next_after_id(), 0);
  EXPECT_TRUE(page.jobs(0).spec_yaml().empty());
}

TEST(ServeHardening, AModelThatCrashesItsImportFailsAloneAndTheDaemonGoesOn) {
  TempDir dir;
  ServeProcess serve({"--db", dir.file("k.db"), "--jobs", "1"}, dir.file("serve.log"));
  ASSERT_FALSE(serve.address().empty()) << serve.log();
  const std::string stride0 = conv_model(dir.file("stride0.onnx"), 0);

  // At submit: refused, with the reason; the daemon lives.
  std::string crash =
      dir.write("crash.yaml", "model: " + stride0 + "\ntuner: random\nbudget: {trials: 2}\n");
  testing::CommandResult r = submit(serve.address(), crash);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("model: "));
  EXPECT_TRUE(jobs_json(serve.address()).is_array()) << serve.log();

  // A file that is not ONNX is refused at submit too.
  std::string text = dir.write("shadow.onnx", "root:*:19000:0:99999:7:::\n");
  std::string not_onnx = dir.write("shadow.yaml", "model: " + text + "\n");
  r = submit(serve.address(), not_onnx);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("ModelProto"));

  // At start: a job waits behind another while its model is replaced by the crashing one.
  std::string first = dir.write("first.yaml", small_job(6));
  ASSERT_EQ(submit(serve.address(), first).exit_code, 0);
  const std::string model = conv_model(dir.file("model.onnx"), 1);
  std::string swapped =
      dir.write("swapped.yaml", "model: " + model +
                                    "\ntuner: random\nbudget: {trials: 2}\nmeasure: {number: 1, "
                                    "repeat: 1, cooldown_interval: 0, n_parallel: 1}\n");
  ASSERT_EQ(submit(serve.address(), swapped).exit_code, 0);
  std::filesystem::rename(stride0, model);
  std::string after = dir.write("after.yaml", small_job(2));
  ASSERT_EQ(submit(serve.address(), after).exit_code, 0);
  auto s = wait_final(serve.address(), 120);
  ASSERT_EQ(s.size(), 3u) << serve.log();
  EXPECT_EQ(s[1].first, "done") << s[1].second;
  EXPECT_EQ(s[2].first, "failed");
  EXPECT_THAT(s[2].second, HasSubstr("model: "));
  EXPECT_EQ(s[3].first, "done") << s[3].second;
  EXPECT_EQ(serve.wait_exit(0), -2) << "the daemon died:\n" << serve.log();
}

}  // namespace
}  // namespace kiln
