// The farm measuring for real (issue 12, items 3-5), all on 127.0.0.1 with TLS from
// `kiln certs init`: a `kiln tracker`, `kiln runner`s and `kiln tune --tracker` as processes.
// A small dense tune is measured on two runners with every trial recorded once and correct; a
// runner SIGKILLed mid-batch leaves every config recorded exactly once, measured by the other;
// unsigned, wrongly signed and tampered artifacts are PERMISSION_DENIED and never loaded; a
// measurement child over its address-space limit is a RUNTIME_DEVICE result, and the runner lives;
// `kiln builder`s build a tune's configs, a dead one's share going to another.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/sha256.h"
#include "farm/security.h"
#include "farm/signing.h"
#include "proto/kiln.grpc.pb.h"
#include "tests/farm/farm_fixture.h"
#include "tests/run_kiln.h"

namespace kiln::farm {
namespace {

using kiln::testing::run_kiln;
using ::testing::HasSubstr;

using testing::FarmFixture;
using testing::KilnProcess;
using testing::Record;
using testing::records;

class RemoteFarm : public FarmFixture {
 protected:
  // A lease on runner `name` from the tracker, as a client gets one (waits for it up to 60 s).
  v1::Lease lease_on(const std::string& name) {
    Result<std::shared_ptr<grpc::ChannelCredentials>> creds =
        client_credentials({certs_, "", false});
    EXPECT_TRUE(creds.ok()) << creds.status().message();
    auto tracker = v1::Tracker::NewStub(grpc::CreateChannel(tracker_->address(), *creds));
    v1::Lease lease;
    for (int attempt = 0; attempt < 20 && lease.runner().runner_id() != name; ++attempt) {
      v1::LeaseRequest request;
      request.set_key("k1");
      request.set_lease_seconds(600);
      request.set_wait_seconds(60);
      request.set_client("remote_e2e_test");
      grpc::ClientContext ctx;
      grpc::Status s = tracker->RequestRunner(&ctx, request, &lease);
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    EXPECT_EQ(lease.runner().runner_id(), name);
    return lease;
  }
};

TEST_F(RemoteFarm, SmallDenseTuneOnTwoRunnersRecordsEveryTrialOnceAndCorrect) {
  auto r1 = start_runner("r1");
  auto r2 = start_runner("r2");
  ASSERT_TRUE(r1 && r2);
  std::string db = dir_.file("t.db");
  kiln::testing::CommandResult tune =
      run_kiln(joined(tune_args(db, "dense:M=32,N=64,K=32", 24, /*cooldown_s=*/0)));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  std::vector<Record> rs = records(db);
  ASSERT_EQ(rs.size(), 24u) << tune.output;
  std::set<int64_t> configs;
  for (const Record& r : rs) {
    configs.insert(r.config_index);
    // Error 0: the kernel's output matched the reference before its time counted.
    EXPECT_EQ(r.error_no, 0) << r.message;
  }
  EXPECT_EQ(configs.size(), 24u);
  // Batches of 8 in chunks of 4: both runners measured.
  EXPECT_GT(trials_of("r1"), 0);
  EXPECT_GT(trials_of("r2"), 0);
  EXPECT_EQ(trials_of("r1") + trials_of("r2"), 24);
}

TEST_F(RemoteFarm, RunnerKilledMidBatchLeavesEachConfigRecordedExactlyOnce) {
  auto r1 = start_runner("r1");
  auto r2 = start_runner("r2");
  ASSERT_TRUE(r1 && r2);
  std::string db = dir_.file("k.db");
  // 0.25 s of cooldown per config: a chunk of 4 takes about a second on a runner.
  std::vector<std::string> args =
      tune_args(db, "dense:M=32,N=64,K=32", 32, /*cooldown_s=*/0.25, /*n_parallel=*/8, /*seed=*/6);
  KilnProcess tune(args, "");
  // Kill r1 while it measures: once it has reported some trials, mid-run.
  ASSERT_TRUE(testing::wait_until(120, [&] { return trials_of("r1") > 0; })) << status();
  ASSERT_TRUE(tune.running()) << "the tune finished before the kill";
  r1->kill_now();
  ASSERT_EQ(tune.wait_exit(), 0) << tune.output();
  std::vector<Record> rs = records(db);
  ASSERT_EQ(rs.size(), 32u) << tune.output();
  std::set<int64_t> configs;
  for (const Record& r : rs) {
    configs.insert(r.config_index);
    EXPECT_EQ(r.error_no, 0) << r.message;  // re-measured on r2, not recorded as lost
  }
  EXPECT_EQ(configs.size(), 32u);
  EXPECT_TRUE(r2->running());
  // The client reported r1's loss to the tracker as a runner fault (quarantine after 3).
  const nlohmann::json st = status();
  bool seen = false;
  for (const auto& k : st["keys"]) {
    for (const auto& r : k["runners"]) {
      if (r["id"] != "r1") continue;
      seen = true;
      EXPECT_TRUE(r["consecutive_faults"].get<int>() >= 1 || r["state"] == "quarantined") << r;
    }
  }
  EXPECT_TRUE(seen) << st;
}

// One config of dense:K=32,M=32,N=64,bias=0 (dense_pack.x86), as kiln tune recorded it.
v1::MeasureItem item_with_artifact(const std::string& artifact) {
  v1::MeasureItem item;
  v1::Task* task = item.mutable_input()->mutable_task();
  task->set_template_name("dense_pack.x86");
  task->set_workload("dense:K=32,M=32,N=64,bias=0");
  task->mutable_target()->set_cpu("x86-64");
  item.mutable_input()->mutable_config()->set_index(15067);
  item.mutable_input()->mutable_config()->set_entities_json(
      R"([["tile_y","sp",[-1,16,2]],["tile_x","sp",[-1,16,4]],["tile_k","sp",[-1,2]],)"
      R"(["tile_inner","sp",[-1,16]]])");
  v1::BuildResult* b = item.mutable_build();
  b->set_artifact(artifact);
  b->set_sha256(sha256_hex(artifact));
  v1::KernelManifest* m = b->mutable_manifest();
  m->set_name("dense_pack");
  for (int64_t n : {32 * 32, 64 * 32, 32 * 64}) m->add_buffer_elements(n);
  m->set_num_inputs(2);
  m->set_num_outputs(1);
  m->add_stages("dense_pack_stage0");
  m->add_stage_timed(true);
  return item;
}

TEST_F(RemoteFarm, UnsignedWronglySignedOrTamperedArtifactsArePermissionDenied) {
  auto r1 = start_runner("r1");
  ASSERT_TRUE(r1);
  const v1::Lease lease = lease_on("r1");
  Result<std::shared_ptr<grpc::ChannelCredentials>> creds = client_credentials({certs_, "", false});
  ASSERT_TRUE(creds.ok()) << creds.status().message();
  auto runner = v1::Runner::NewStub(grpc::CreateChannel(r1->address(), *creds));
  Result<std::string> key = read_signing_key(certs_ + "/token");
  ASSERT_TRUE(key.ok()) << key.status().message();
  // Not a shared object: loading it would fail, so a PERMISSION_DENIED reply shows it was not.
  const std::string artifact =
      "\x7f"
      "ELF not really a kernel";
  auto measure = [&](const v1::MeasureItem& item, v1::MeasureReply* reply) {
    v1::MeasureRequest request;
    request.set_lease_id(lease.lease_id());
    request.mutable_options()->set_number(1);
    request.mutable_options()->set_repeat(1);
    request.mutable_options()->set_tolerance(1e-4);
    request.mutable_options()->set_timeout_s(5);
    request.mutable_options()->set_build_timeout_s(5);
    *request.add_items() = item;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return runner->Measure(&ctx, request, reply);
  };
  v1::MeasureReply reply;
  v1::MeasureItem unsigned_item = item_with_artifact(artifact);
  grpc::Status s = measure(unsigned_item, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("MeasureRequest.items[0].signature"));

  v1::MeasureItem wrong = item_with_artifact(artifact);
  wrong.set_signature(sign_digest(*key + "x", wrong.build().sha256()));  // another key
  s = measure(wrong, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();

  v1::MeasureItem tampered = item_with_artifact(artifact);
  tampered.set_signature(sign_digest(*key, tampered.build().sha256()));
  tampered.mutable_build()->set_artifact(artifact + " with a payload");  // digest kept
  s = measure(tampered, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("does not hash to its signed sha256"));

  // Nothing of the refused requests was cached either.
  v1::ArtifactQuery query;
  query.add_sha256(sha256_hex(artifact));
  v1::ArtifactQueryReply missing;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(runner->MissingArtifacts(&ctx, query, &missing).ok());
  }
  EXPECT_EQ(missing.missing_size(), 1);

  // Signed correctly, the same bytes get past the check and fail where loading fails.
  v1::MeasureItem good = item_with_artifact(artifact);
  good.set_signature(sign_digest(*key, good.build().sha256()));
  s = measure(good, &reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(reply.results_size(), 1);
  EXPECT_EQ(reply.results(0).error_no(), v1::RUNTIME_DEVICE) << reply.results(0).message();

  // A malformed request names the field.
  v1::MeasureRequest request;
  request.set_lease_id(lease.lease_id());
  request.mutable_options()->set_number(0);
  *request.add_items() = good;
  grpc::ClientContext ctx;
  s = runner->Measure(&ctx, request, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("MeasureRequest.options.number"));
  EXPECT_TRUE(r1->running());
}

TEST_F(RemoteFarm, ChildOverItsAddressSpaceLimitIsAResultNotADeadRunner) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit this test sets";
#else
  auto r1 = start_runner("r1", {"--max-memory-mb", "8000"});
  ASSERT_TRUE(r1);
  // 16 GiB of tensors under an 8000 MiB address-space limit.
  std::string db = dir_.file("oom.db");
  kiln::testing::CommandResult tune =
      run_kiln(joined(tune_args(db, "dense:M=65536,N=65536,K=16", 1, /*cooldown_s=*/0)));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  std::vector<Record> rs = records(db);
  ASSERT_EQ(rs.size(), 1u) << tune.output;
  EXPECT_EQ(rs[0].error_no, 4) << rs[0].message;  // RUNTIME_DEVICE
  EXPECT_THAT(rs[0].message, HasSubstr("out of memory"));
  EXPECT_FALSE(rs[0].runner_lost);
  // The runner lives and measures the next task.
  ASSERT_TRUE(r1->running());
  std::string db2 = dir_.file("small.db");
  tune = run_kiln(joined(tune_args(db2, "dense:M=32,N=64,K=32", 4, /*cooldown_s=*/0)));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  rs = records(db2);
  ASSERT_EQ(rs.size(), 4u);
  for (const Record& r : rs) EXPECT_EQ(r.error_no, 0) << r.message;
#endif
}

TEST_F(RemoteFarm, RemoteBuildersBuildTheTuneAndADeadBuilderIsDropped) {
  auto r1 = start_runner("r1");
  ASSERT_TRUE(r1);
  KilnProcess b1({"builder", "--listen", "127.0.0.1:0", "--certs", certs_},
                 "kiln builder listening on ");
  ASSERT_FALSE(b1.address().empty()) << b1.output();
  // 127.0.0.1:1 refuses connections: its share of each batch is built by b1.
  std::string db = dir_.file("b.db");
  kiln::testing::CommandResult tune =
      run_kiln(joined(tune_args(db, "dense:M=32,N=64,K=32", 16, /*cooldown_s=*/0)) + "--builders " +
               b1.address() + ",127.0.0.1:1");
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  std::vector<Record> rs = records(db);
  ASSERT_EQ(rs.size(), 16u) << tune.output;
  std::set<int64_t> configs;
  for (const Record& r : rs) {
    configs.insert(r.config_index);
    EXPECT_EQ(r.error_no, 0) << r.message;
  }
  EXPECT_EQ(configs.size(), 16u);

  // A malformed request is INVALID_ARGUMENT naming the field.
  Result<std::shared_ptr<grpc::ChannelCredentials>> creds = client_credentials({certs_, "", false});
  ASSERT_TRUE(creds.ok());
  auto builder = v1::Builder::NewStub(grpc::CreateChannel(b1.address(), *creds));
  v1::BuildRequest request;
  request.mutable_options()->set_number(1);
  request.mutable_options()->set_repeat(1);
  request.mutable_options()->set_tolerance(1e-4);
  request.mutable_options()->set_timeout_s(5);
  request.mutable_options()->set_build_timeout_s(5);
  *request.add_inputs() = item_with_artifact("x").input();
  request.mutable_inputs(0)->mutable_task()->set_template_name("no_such_template");
  v1::BuildReply reply;
  grpc::ClientContext ctx;
  grpc::Status s = builder->Build(&ctx, request, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("BuildRequest.inputs[0]"));
  EXPECT_TRUE(b1.running());
}

}  // namespace
}  // namespace kiln::farm
