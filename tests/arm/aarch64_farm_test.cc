// The aarch64 kiln-runner (cross-built by this build, tests/arm/CMakeLists.txt) under
// qemu-user on 127.0.0.1: an x86 tracker, the runner started as
// `qemu-aarch64-static kiln-runner runner ... --exec-prefix qemu-aarch64-static --emulated`, and
// `kiln tune --target aarch64` of a dense, a conv2d, a depthwise and a batch_matmul workload (every
// template) on its key: every record a success whose output passed the reference check on the
// runner. An unsigned artifact is PERMISSION_DENIED, an x86 artifact recorded as refused; a model
// compiled for aarch64 runs under qemu to the reference output.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"
#include "tests/arm/arm_support.h"

namespace kiln::arm {
namespace {

using kiln::testing::run_kiln;
using kiln::testing::run_shell;
using ::testing::HasSubstr;

constexpr const char* kAarch64Target = "'llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72'";

class Aarch64Farm : public farm::testing::FarmFixture {
 protected:
  void SetUp() override {
    if (std::string why = aarch64_missing(); !why.empty()) GTEST_SKIP() << why;
    FarmFixture::SetUp();
  }

  // The aarch64 runner "pi1" of key rpi4 under qemu, once it is free at the tracker.
  std::unique_ptr<farm::testing::ChildProcess> start_pi() {
    auto p = std::make_unique<farm::testing::ChildProcess>(
        QEMU_AARCH64,
        std::vector<std::string>{AARCH64_RUNNER_BINARY, "runner", "--tracker", tracker_->address(),
                                 "--key", "rpi4", "--name", "pi1", "--certs", certs_,
                                 "--exec-prefix", qemu_prefix(), "--emulated"},
        "kiln runner pi1 listening on ");
    if (p->address().empty()) {
      ADD_FAILURE() << "the aarch64 runner did not start: " << p->output();
      return nullptr;
    }
    if (!farm::testing::wait_until(120, [&] { return state_of("pi1") == "free"; })) {
      ADD_FAILURE() << "pi1 is not free at the tracker: " << status();
      return nullptr;
    }
    return p;
  }

  // `kiln tune` of `workload` on rpi4, `trials` configs, into `db`.
  kiln::testing::CommandResult tune(const std::string& db, const std::string& workload, int trials,
                                    const std::string& target = kAarch64Target) {
    return run_kiln("tune --workload " + workload + " --target " + target + " --trials " +
                    std::to_string(trials) +
                    " --n-parallel 2 --tuner random --seed 3 --number 1 --repeat 1"
                    " --cooldown-interval 0 --timeout 120 --db " +
                    db + " --tracker " + tracker_->address() + " --key rpi4 --certs " + certs_ +
                    " --runner-wait 300 --runner-chunk 2");
  }
};

// Every template (kiln templates: dense pack and nopack, conv2d NCHWc and Winograd, depthwise
// NCHWc, batch_matmul) built for aarch64 and checked on the runner. `--workload` alone tunes an
// operator's TVM templates; Winograd, kiln's extra conv template, is named.
TEST_F(Aarch64Farm, EveryTemplateTunedForAarch64PassesTheReferenceCheckOnTheBoard) {
  auto pi = start_pi();
  ASSERT_TRUE(pi);
  const std::vector<std::string> workloads = {
      "dense:M=4,N=16,K=16",
      "conv2d:N=1,C=4,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1",
      "depthwise_conv2d:N=1,C=8,H=8,W=8,R=3,S=3,stride=1,pad=1",
      "batch_matmul:B=2,M=4,N=8,K=8",
      "conv2d:N=1,C=4,H=8,W=8,K=8,R=3,S=3,stride=1,pad=1 --template conv2d_NCHWc_winograd.x86",
  };
  int64_t trials = 0;
  for (size_t i = 0; i < workloads.size(); ++i) {
    const std::string db = dir_.file("w" + std::to_string(i) + ".db");
    kiln::testing::CommandResult t = tune(db, workloads[i], 2);
    ASSERT_EQ(t.exit_code, 0) << workloads[i] << ": " << t.output;
    std::vector<farm::testing::Record> rs = farm::testing::records(db);
    ASSERT_FALSE(rs.empty()) << t.output;
    if (workloads[i].find("winograd") != std::string::npos) {
      EXPECT_THAT(t.output, HasSubstr("conv2d_NCHWc_winograd.x86 conv2d:")) << t.output;
    }
    for (const farm::testing::Record& r : rs) {
      // Error 0: the runner's reference check passed on the aarch64 output.
      EXPECT_EQ(r.error_no, 0) << workloads[i] << " config " << r.config_index << ": " << r.message;
      // Timed under qemu: marked, so that no cost of it is taken for the board's speed.
      EXPECT_THAT(r.measure_options, HasSubstr("\"emulated\":true"));
    }
    EXPECT_THAT(t.output, HasSubstr("trials ran on an emulator"));
    EXPECT_THAT(t.output, HasSubstr("best: none (costs measured on an emulator rank nothing)"));
    // Never a best config: `kiln best` has none and says why; no TVM line claims these costs.
    kiln::testing::CommandResult best = run_kiln("best --db " + db + " --target " + kAarch64Target);
    EXPECT_EQ(best.exit_code, 0) << best.output;
    EXPECT_THAT(best.output, HasSubstr("no successful record"));
    EXPECT_THAT(best.output, HasSubstr("measured on an emulator"));
    trials += static_cast<int64_t>(rs.size());
  }
  EXPECT_EQ(trials_of("pi1"), trials);
}

TEST_F(Aarch64Farm, RefusesUnsignedAndX86Artifacts) {
  auto pi = start_pi();
  ASSERT_TRUE(pi);
  // An x86 kernel (a client that named the wrong key): recorded as refused, nothing loaded.
  const std::string db = dir_.file("x86.db");
  kiln::testing::CommandResult t = tune(db, "dense:M=4,N=16,K=16", 2, "llvm");
  ASSERT_EQ(t.exit_code, 0) << t.output;
  std::vector<farm::testing::Record> rs = farm::testing::records(db);
  ASSERT_FALSE(rs.empty()) << t.output;
  for (const farm::testing::Record& r : rs) {
    EXPECT_EQ(r.error_no, 4) << r.message;  // RUNTIME_DEVICE
    EXPECT_THAT(r.message, HasSubstr("code for x86_64; this machine runs aarch64"));
  }
  // An unsigned artifact: PERMISSION_DENIED before anything is loaded.
  Result<std::shared_ptr<grpc::ChannelCredentials>> creds =
      farm::client_credentials({certs_, "", false});
  ASSERT_TRUE(creds.ok()) << creds.status().message();
  auto tracker = v1::Tracker::NewStub(grpc::CreateChannel(tracker_->address(), *creds));
  v1::LeaseRequest lr;
  lr.set_key("rpi4");
  lr.set_lease_seconds(600);
  lr.set_wait_seconds(60);
  lr.set_client("aarch64_farm_test");
  v1::Lease lease;
  grpc::ClientContext lctx;
  ASSERT_TRUE(tracker->RequestRunner(&lctx, lr, &lease).ok());
  auto runner_stub = v1::Runner::NewStub(grpc::CreateChannel(pi->address(), *creds));
  v1::MeasureRequest request;
  request.set_lease_id(lease.lease_id());
  request.mutable_options()->set_number(1);
  request.mutable_options()->set_repeat(1);
  request.mutable_options()->set_tolerance(1e-4);
  request.mutable_options()->set_timeout_s(5);
  request.mutable_options()->set_build_timeout_s(5);
  const std::string artifact =
      "\x7f"
      "ELF not really a kernel";
  v1::MeasureItem* item = request.add_items();
  item->mutable_build()->set_artifact(artifact);
  item->mutable_build()->set_sha256(sha256_hex(artifact));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::MeasureReply reply;
  grpc::Status s = runner_stub->Measure(&ctx, request, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("MeasureRequest.items[0].signature"));
  EXPECT_TRUE(pi->running());
}

TEST(Aarch64Model, CompiledForAarch64RunsUnderQemuToTheReferenceOutput) {
  if (std::string why = aarch64_missing(); !why.empty()) GTEST_SKIP() << why;
  kiln::testing::TempDir dir("kiln-arm-model");
  const std::string model = dir.file("mlp.kiln");
  kiln::testing::CommandResult compile =
      run_kiln("compile " + mlp_dir() + "/mlp.onnx --target " + kAarch64Target + " -o " + model);
  ASSERT_EQ(compile.exit_code, 0) << compile.output;
  const std::string out = dir.file("out.bin");
  kiln::testing::CommandResult run =
      run_shell(qemu_prefix() + " " + AARCH64_RUNNER_BINARY + " run " + model + " --input " +
                mlp_dir() + "/input.bin -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_LE(relative_max_error(read_floats(out), read_floats(mlp_dir() + "/output.bin")), 1e-4);
  // The x86 kiln refuses it with the reason (it is not this machine's code).
  kiln::testing::CommandResult x86 =
      run_kiln("run " + model + " --input " + mlp_dir() + "/input.bin");
  EXPECT_EQ(x86.exit_code, 2) << x86.output;
  EXPECT_THAT(x86.output, HasSubstr("foreign target"));
}

}  // namespace
}  // namespace kiln::arm
