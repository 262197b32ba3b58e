// Issue 12's acceptance scenarios, with real processes on 127.0.0.1: a `kiln tracker`, three
// `kiln runner`s and `kiln tune --tracker`. A runner SIGKILLed mid-batch: every trial is recorded
// exactly once, and `kiln farm status` shows the dead runner gone (removed after missed
// heartbeats) and the others' trial counts. A runner SIGSTOPped mid-batch (a cut network): it
// misses its heartbeats, is quarantined, its lease ends and its configs are measured by the
// others while it is still stopped. A runner whose every measurement fails (its scratch
// directory vanished) is quarantined and the tune carries on with the others. A Measure call
// needs the lease the tracker granted on that runner; oversized and malformed requests are
// refused with their codes, and the tracker lives on.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "farm/message_size.h"
#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"
#include "tests/farm/farm_fixture.h"

namespace kiln::farm {
namespace {

using ::testing::HasSubstr;
using testing::KilnProcess;
using testing::Record;
using testing::records;
using testing::wait_until;

class FarmAcceptance : public testing::FarmFixture {
 protected:
  // Heartbeats twice a second; silent 5 s: quarantined; silent 12 s: removed. Three runner
  // faults in a row: quarantined for longer than any test runs.
  std::vector<std::string> tracker_args() const override {
    return {"--heartbeat-interval", "0.5", "--heartbeat-timeout", "5",  "--forget-after", "12",
            "--max-faults",         "3",   "--quarantine",        "600"};
  }

  std::shared_ptr<grpc::ChannelCredentials> creds() const {
    Result<std::shared_ptr<grpc::ChannelCredentials>> c = client_credentials({certs_, "", false});
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? *c : nullptr;
  }

  // Runners r1, r2 and r3 (in runners_), and a tune of 48 configs on them into `db` (batches of 8,
  // at most 2 per call, 0.25 s of cooldown per config), once r1 has measured some: mid-batch.
  // nullptr, with a test failure, if the farm did not get there.
  std::unique_ptr<KilnProcess> tune_on_three_runners_until_r1_measured(const std::string& db) {
    for (const char* name : {"r1", "r2", "r3"}) {
      runners_.push_back(start_runner(name));
      if (!runners_.back()) return nullptr;
    }
    auto tune = std::make_unique<KilnProcess>(tune_args(db, "dense:M=32,N=64,K=32", 48, 0.25), "");
    if (!wait_until(120, [&] { return trials_of("r1") > 0; })) {
      ADD_FAILURE() << "r1 measured nothing: " << status();
      return nullptr;
    }
    if (!tune->running()) {
      ADD_FAILURE() << "the tune finished too soon: " << tune->output();
      return nullptr;
    }
    return tune;
  }

  // Every config of the tune in `db` recorded exactly once, and measured correctly.
  void expect_each_config_once_and_correct(const std::string& db, size_t trials,
                                           const std::string& output) {
    std::vector<Record> rs = records(db);
    ASSERT_EQ(rs.size(), trials) << output;
    std::set<int64_t> configs;
    for (const Record& r : rs) {
      configs.insert(r.config_index);
      EXPECT_EQ(r.error_no, 0) << r.message;  // measured again elsewhere, not recorded as lost
    }
    EXPECT_EQ(configs.size(), trials);
  }

  std::vector<std::unique_ptr<KilnProcess>> runners_;
};

TEST_F(FarmAcceptance, RunnerKilledMidBatchEveryTrialOnceAndTheDeadRunnerGone) {
  const std::string db = dir_.file("kill.db");
  std::unique_ptr<KilnProcess> tune = tune_on_three_runners_until_r1_measured(db);
  ASSERT_TRUE(tune);
  runners_[0]->kill_now();
  ASSERT_EQ(tune->wait_exit(), 0) << tune->output();
  expect_each_config_once_and_correct(db, 48, tune->output());

  // Missed heartbeats: quarantined, then removed; the others stay with their counts.
  ASSERT_TRUE(wait_until(60, [&] { return runner("r1").is_null(); })) << status();
  const nlohmann::json st = status();
  ASSERT_EQ(st["keys"].size(), 1u) << st;
  EXPECT_EQ(st["keys"][0]["free"], 2) << st;
  EXPECT_EQ(st["keys"][0]["quarantined"], 0) << st;
  ASSERT_EQ(st["keys"][0]["runners"].size(), 2u) << st;
  int64_t others = 0;
  for (const auto& r : st["keys"][0]["runners"]) {
    EXPECT_GT(r["trials"].get<int64_t>(), 0) << r;
    EXPECT_EQ(r["errors"], 0) << r;
    others += r["trials"].get<int64_t>();
  }
  EXPECT_LE(others, 48);  // r1 measured the rest before it died
  tracker_->signal(SIGTERM);
  tracker_->wait_exit();
  EXPECT_THAT(tracker_->output(), HasSubstr("runner r1 (key k1) removed: no heartbeat"));
}

TEST_F(FarmAcceptance, RunnerStoppedMidBatchLosesItsLeaseAndItsConfigsRunElsewhere) {
  const std::string db = dir_.file("cut.db");
  std::unique_ptr<KilnProcess> tune = tune_on_three_runners_until_r1_measured(db);
  ASSERT_TRUE(tune);
  // Stopped while it measures: it neither answers its client nor sends heartbeats, as behind a
  // cut network.
  KilnProcess& r1 = *runners_[0];
  r1.signal(SIGSTOP);
  ASSERT_TRUE(wait_until(60, [&] { return state_of("r1") == "quarantined"; })) << status();
  EXPECT_THAT(runner("r1")["quarantine_reason"].get<std::string>(), HasSubstr("no heartbeat"));
  // The tune ends while r1 is still stopped: its chunk was measured by the others.
  ASSERT_EQ(tune->wait_exit(), 0) << tune->output();
  expect_each_config_once_and_correct(db, 48, tune->output());
  EXPECT_GT(trials_of("r2"), 0);
  EXPECT_GT(trials_of("r3"), 0);
  // Back on the network, it is not handed out again while quarantined (or, forgotten meanwhile,
  // it registers anew); it lives either way.
  r1.signal(SIGCONT);
  ASSERT_TRUE(wait_until(30, [&] {
    const std::string s = state_of("r1");
    return s == "quarantined" || s == "free";
  })) << status();
  EXPECT_TRUE(r1.running());
}

TEST_F(FarmAcceptance, RunnerWhoseMeasurementsFailIsQuarantinedAndTheTuneCarriesOn) {
  auto r1 = start_runner("r1");
  auto r2 = start_runner("r2");
  // r3's scratch directory vanishes after it started (a disk unmounted): no measurement child
  // can start there, so every measurement fails and the runner's checks stay as they are.
  const std::string scratch = dir_.file("r3-scratch");
  std::filesystem::create_directory(scratch);
  auto r3 = start_runner("r3", {"--scratch", scratch});
  ASSERT_TRUE(r1 && r2 && r3);
  std::filesystem::remove_all(scratch);

  const std::string db = dir_.file("q.db");
  kiln::testing::CommandResult tune =
      kiln::testing::run_kiln(joined(tune_args(db, "dense:M=32,N=64,K=32", 32, 0)));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  expect_each_config_once_and_correct(db, 32, tune.output);

  const nlohmann::json bad = runner("r3");
  ASSERT_FALSE(bad.is_null()) << status();
  EXPECT_EQ(bad["state"], "quarantined") << bad;
  EXPECT_THAT(bad["quarantine_reason"].get<std::string>(),
              HasSubstr("failed measurements in a row"));
  EXPECT_GE(bad["errors"].get<int64_t>(), 3) << bad;
  EXPECT_GT(trials_of("r1"), 0);
  EXPECT_GT(trials_of("r2"), 0);
  EXPECT_TRUE(r3->running());
}

// Cross-compiled kernels reach a runner of another architecture (a client that named the wrong
// key): each config is recorded with the reason, nothing is loaded, and the runner is not blamed.
TEST_F(FarmAcceptance, RunnerRefusesArtifactsOfAnotherArchitectureWithTheReason) {
  auto r1 = start_runner("r1");
  ASSERT_TRUE(r1);
  const std::string db = dir_.file("arm.db");
  std::vector<std::string> args = tune_args(db, "dense:M=8,N=32,K=16", 6, 0);
  args.insert(args.end(), {"--target", "'llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72'"});
  kiln::testing::CommandResult tune = kiln::testing::run_kiln(joined(args));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  std::vector<Record> rs = records(db);
  ASSERT_EQ(rs.size(), 6u) << tune.output;
  for (const Record& r : rs) {
    EXPECT_EQ(r.error_no, 4) << r.message;  // RUNTIME_DEVICE
    EXPECT_THAT(r.message, HasSubstr("this runner cannot run it"));
    EXPECT_THAT(r.message, HasSubstr("code for aarch64; this machine runs x86_64"));
  }
  EXPECT_EQ(state_of("r1"), "free") << status();
}

TEST_F(FarmAcceptance, MeasureNeedsTheLeaseTheTrackerGrantedOnThatRunner) {
  auto r1 = start_runner("r1");
  auto r2 = start_runner("r2");
  ASSERT_TRUE(r1 && r2);
  auto tracker = v1::Tracker::NewStub(grpc::CreateChannel(tracker_->address(), creds()));
  auto lease = [&] {
    v1::LeaseRequest request;
    request.set_key("k1");
    request.set_lease_seconds(600);
    request.set_wait_seconds(60);
    v1::Lease out;
    grpc::ClientContext ctx;
    EXPECT_TRUE(tracker->RequestRunner(&ctx, request, &out).ok());
    return out;
  };
  // Both runners leased: one lease each.
  const v1::Lease a = lease();
  const v1::Lease b = lease();
  const v1::Lease& on_r1 = a.runner().runner_id() == "r1" ? a : b;
  const v1::Lease& on_r2 = a.runner().runner_id() == "r1" ? b : a;
  ASSERT_EQ(on_r1.runner().runner_id(), "r1");
  ASSERT_EQ(on_r2.runner().runner_id(), "r2");

  auto runner1 = v1::Runner::NewStub(grpc::CreateChannel(r1->address(), creds()));
  auto measure = [&](const std::string& lease_id) {
    v1::MeasureRequest request;  // no items: only the lease is at stake
    request.set_lease_id(lease_id);
    request.mutable_options()->set_number(1);
    request.mutable_options()->set_repeat(1);
    request.mutable_options()->set_tolerance(1e-4);
    request.mutable_options()->set_timeout_s(5);
    request.mutable_options()->set_build_timeout_s(5);
    v1::MeasureReply reply;
    grpc::ClientContext ctx;
    return runner1->Measure(&ctx, request, &reply);
  };
  grpc::Status s = measure("");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("MeasureRequest.lease_id: missing"));
  s = measure(on_r2.lease_id());  // another runner's lease
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("not a lease the tracker holds on this runner"));
  s = measure("lease-1-0123456789abcdef");  // made up
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  s = measure(on_r1.lease_id());
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// A unary call of `method` at `address` whose request bytes are no protobuf message.
grpc::Status call_with_garbage(const std::string& address,
                               const std::shared_ptr<grpc::ChannelCredentials>& creds,
                               const std::string& method) {
  grpc::GenericStub generic(grpc::CreateChannel(address, creds));
  const std::string garbage = "\xff\xff\xff\xff\x0f not a protobuf message";
  grpc::Slice slice(garbage);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status s;
  generic.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &response, [&](grpc::Status st) {
    std::lock_guard<std::mutex> lock(mu);
    s = st;
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return s;
}

TEST_F(FarmAcceptance, OversizedAndMalformedRequestsAreRefusedAndTheTrackerLives) {
  auto tracker = v1::Tracker::NewStub(grpc::CreateChannel(tracker_->address(), creds()));
  auto register_named = [&](const std::string& name) {
    v1::RegisterRequest request;
    v1::RunnerCapabilities* c = request.mutable_capabilities();
    c->set_key("k1");
    c->set_name(name);
    c->set_address("127.0.0.1:9");
    c->mutable_target()->set_cpu("x86-64");
    c->set_kiln_version("0.1.0");
    c->set_cores(1);
    v1::RegisterReply reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return tracker->Register(&ctx, request, &reply);
  };
  // Over the tracker's declared maximum: kiln's check answers, naming the sizes.
  grpc::Status s = register_named(std::string(kMaxTrackerRequestBytes + 1000, 'a'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("over this service's maximum of"));
  // Over the transport limit (twice that): gRPC refuses it before reading it.
  s = register_named(std::string(2 * kMaxTrackerRequestBytes + 1000, 'a'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // Well-formed protobuf with a malformed field: INVALID_ARGUMENT naming the field.
  s = register_named("no spaces allowed");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("RegisterRequest.capabilities.name"));

  // Bytes that are no protobuf message at all, to the tracker and to a runner: INVALID_ARGUMENT
  // naming the method and the message (farm/checked_unary.h), and both serve on.
  auto runner_process = start_runner("r1");
  ASSERT_TRUE(runner_process);
  s = call_with_garbage(tracker_->address(), creds(), "/kiln.v1.Tracker/Register");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(
      s.error_message(),
      "/kiln.v1.Tracker/Register: the request is not a valid kiln.v1.RegisterRequest message");
  s = call_with_garbage(runner_process->address(), creds(), "/kiln.v1.Runner/Measure");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("not a valid kiln.v1.MeasureRequest message"));
  EXPECT_TRUE(runner_process->running());
  EXPECT_EQ(state_of("r1"), "free") << status();

  EXPECT_TRUE(tracker_->running());
  s = register_named("still-serving");
  EXPECT_TRUE(s.ok()) << s.error_message();
}

}  // namespace
}  // namespace kiln::farm
