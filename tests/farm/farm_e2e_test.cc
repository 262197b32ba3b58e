// The farm end to end: a real `kiln tracker` process on 127.0.0.1 (a free port it picks), real
// TLS with certificates from `kiln certs init`, and clients that register fake runner identities
// through the real gRPC API, send heartbeats, lease, report failures until a quarantine, and read
// `kiln farm status --json`. Unauthenticated clients are refused; so is a non-loopback address
// without TLS unless --insecure.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"
#include "tests/farm/child_process.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln::farm {
namespace {

using kiln::testing::run_kiln;
using kiln::testing::TempDir;
using ::testing::HasSubstr;

// A `kiln tracker` child process, read up to the line that says where it listens (or EOF, when
// the tracker refused to start).
class TrackerProcess : public testing::ChildProcess {
 public:
  explicit TrackerProcess(const std::vector<std::string>& args)
      : ChildProcess(KILN_BINARY, with_command(args), "kiln tracker listening on ") {}
  // "HOST:PORT" as the tracker printed it, empty if it did not start.
  std::string address() const {
    const std::string ready = "kiln tracker listening on ";
    if (line().size() <= ready.size()) return "";
    std::string rest = line().substr(ready.size());
    return rest.substr(0, rest.find(' '));
  }
  // SIGTERM, then the rest of its output.
  void stop() {
    signal(SIGTERM);
    wait_exit();
  }

 private:
  static std::vector<std::string> with_command(std::vector<std::string> args) {
    args.insert(args.begin(), "tracker");
    return args;
  }
};

std::unique_ptr<v1::Tracker::Stub> stub(const std::string& address, const ClientAuth& auth) {
  Result<std::shared_ptr<grpc::ChannelCredentials>> creds = client_credentials(auth);
  EXPECT_TRUE(creds.ok()) << creds.status().message();
  return v1::Tracker::NewStub(grpc::CreateChannel(address, *creds));
}

// A deadline of a few seconds for one call.
struct Ctx : grpc::ClientContext {
  Ctx() { set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5)); }
};

v1::RegisterRequest registration(const std::string& name, const std::string& key = "znver5-2c") {
  v1::RegisterRequest r;
  v1::RunnerCapabilities* c = r.mutable_capabilities();
  c->set_key(key);
  c->set_name(name);
  c->set_address("127.0.0.1:9301");
  c->mutable_target()->set_cpu("znver5");
  c->set_cores(2);
  c->set_kiln_version("0.1.0");
  return r;
}

nlohmann::json farm_status_json(const std::string& args) {
  kiln::testing::CommandResult r = run_kiln("farm status --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

const nlohmann::json* find_runner(const nlohmann::json& status, const std::string& id) {
  for (const auto& k : status["keys"]) {
    for (const auto& r : k["runners"]) {
      if (r["id"] == id) return &r;
    }
  }
  return nullptr;
}

TEST(FarmEndToEnd, CertsInitWritesPrivateKeysAndNeverOverwrites) {
  TempDir tmp("kiln_farm");
  const std::string dir = tmp.file("certs");
  kiln::testing::CommandResult r = run_kiln("certs init " + dir + " --host farm.example");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  CertFiles f = cert_files(dir);
  auto mode = [](const std::string& p) {
    struct stat st;
    EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 0777;
  };
  EXPECT_EQ(mode(dir), 0700u);
  for (const std::string& key : {f.ca_key, f.server_key, f.client_key, f.token}) {
    EXPECT_EQ(mode(key), 0600u) << key;
  }
  r = run_kiln("certs init " + dir);
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_THAT(r.output, HasSubstr("exists already"));
  r = run_kiln("certs init " + tmp.file("other") + " --host 'a b'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--host 'a b'"));
}

TEST(FarmEndToEnd, RunnersRegisterLeaseAndAreQuarantinedOverTls) {
  TempDir tmp("kiln_farm");
  const std::string certs = tmp.file("certs");
  ASSERT_EQ(run_kiln("certs init " + certs).exit_code, 0);
  TrackerProcess tracker({"--listen", "127.0.0.1:0", "--certs", certs, "--heartbeat-timeout", "1.5",
                          "--max-faults", "2", "--quarantine", "600"});
  ASSERT_FALSE(tracker.address().empty()) << tracker.output();
  ASSERT_THAT(tracker.address(), ::testing::StartsWith("127.0.0.1:"));

  // Runners authenticate with the farm's client certificate (mutual TLS).
  auto runners = stub(tracker.address(), ClientAuth{certs, "", false});
  // box-silent first: a lease goes to the free runner heard from last, one of the others.
  for (const char* name : {"box-silent", "box-a", "box-b"}) {
    Ctx ctx;
    v1::RegisterReply reply;
    grpc::Status s = runners->Register(&ctx, registration(name), &reply);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(reply.runner_id(), name);
  }
  {
    // A malformed registration: INVALID_ARGUMENT naming the field.
    Ctx ctx;
    v1::RegisterReply reply;
    v1::RegisterRequest bad = registration("box-c");
    bad.mutable_capabilities()->set_cores(0);
    grpc::Status s = runners->Register(&ctx, bad, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("RegisterRequest.capabilities.cores"));
  }
  {
    Ctx ctx;
    v1::HeartbeatRequest hb;
    hb.set_runner_id("nobody");
    v1::HeartbeatReply reply;
    EXPECT_EQ(runners->Heartbeat(&ctx, hb, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  auto heartbeat = [&](const std::string& id) {
    Ctx ctx;
    v1::HeartbeatRequest hb;
    hb.set_runner_id(id);
    v1::HeartbeatReply reply;
    grpc::Status s = runners->Heartbeat(&ctx, hb, &reply);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return reply.state();
  };

  // A client authenticates with the bearer token only (no client certificate).
  TempDir ca_only("kiln_farm_ca");
  ASSERT_EQ(std::system(("cp " + certs + "/ca.pem " + ca_only.path()).c_str()), 0);
  auto client = stub(tracker.address(), ClientAuth{ca_only.path(), certs + "/token", false});
  v1::Lease lease;
  {
    Ctx ctx;
    v1::LeaseRequest req;
    req.set_key("znver5-2c");
    req.set_lease_seconds(300);
    req.set_wait_seconds(2);
    req.set_client("e2e");
    grpc::Status s = client->RequestRunner(&ctx, req, &lease);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // Let box-silent miss its heartbeats while the others keep theirs.
  const std::string leased = lease.runner().runner_id();
  ASSERT_TRUE(leased == "box-a" || leased == "box-b") << leased;
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (const char* id : {"box-a", "box-b"}) heartbeat(id);
  }
  EXPECT_EQ(heartbeat(leased), v1::BUSY);
  {
    // Two runner faults in a row: quarantined, and the lease is over.
    Ctx ctx;
    v1::ReportRequest rep;
    rep.set_lease_id(lease.lease_id());
    v1::MeasureOutcome* o = rep.add_outcomes();
    o->set_error_no(v1::RUNTIME_DEVICE);
    o->set_runner_fault(true);
    *rep.add_outcomes() = *o;
    v1::ReportReply reply;
    grpc::Status s = client->ReportResults(&ctx, rep, &reply);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(reply.state(), v1::QUARANTINED);
  }
  {
    Ctx ctx;
    v1::ReleaseLeaseRequest rel;
    rel.set_lease_id(lease.lease_id());
    v1::ReleaseLeaseReply reply;
    EXPECT_EQ(client->ReleaseLease(&ctx, rel, &reply).error_code(), grpc::StatusCode::NOT_FOUND);
  }

  nlohmann::json st = farm_status_json("--tracker " + tracker.address() + " --certs " + certs);
  ASSERT_EQ(st["keys"].size(), 1u) << st.dump();
  const nlohmann::json& key = st["keys"][0];
  EXPECT_EQ(key["key"], "znver5-2c");
  EXPECT_EQ(key["free"], 1) << st.dump();
  EXPECT_EQ(key["busy"], 0) << st.dump();
  EXPECT_EQ(key["quarantined"], 2) << st.dump();  // the faulty one and the silent one
  EXPECT_EQ(key["queued"], 0);
  const nlohmann::json* bad = find_runner(st, leased);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ((*bad)["state"], "quarantined");
  EXPECT_EQ((*bad)["trials"], 2);
  EXPECT_EQ((*bad)["errors"], 2);
  EXPECT_THAT((*bad)["quarantine_reason"].get<std::string>(),
              HasSubstr("2 failed measurements in a row"));
  const nlohmann::json* silent = find_runner(st, "box-silent");
  ASSERT_NE(silent, nullptr);
  EXPECT_EQ((*silent)["state"], "quarantined");
  EXPECT_THAT((*silent)["quarantine_reason"].get<std::string>(), HasSubstr("no heartbeat"));
  EXPECT_GT((*silent)["last_seen_s_ago"].get<double>(), 1.5);

  {
    // The one free runner is leased; a second request finds none and times out.
    Ctx ctx;
    v1::LeaseRequest req;
    req.set_key("znver5-2c");
    req.set_lease_seconds(60);
    req.set_wait_seconds(0);
    v1::Lease l2;
    ASSERT_TRUE(client->RequestRunner(&ctx, req, &l2).ok());
    EXPECT_NE(l2.runner().runner_id(), leased);
    Ctx ctx2;
    v1::Lease l3;
    req.set_wait_seconds(0.3);
    EXPECT_EQ(client->RequestRunner(&ctx2, req, &l3).error_code(),
              grpc::StatusCode::DEADLINE_EXCEEDED);
  }

  // The tracker reported both quarantines on stderr.
  tracker.stop();
  EXPECT_THAT(tracker.output(), HasSubstr("runner " + leased + " (key znver5-2c) quarantined"));
  EXPECT_THAT(tracker.output(), HasSubstr("runner box-silent (key znver5-2c) quarantined"));
}

TEST(FarmEndToEnd, UnauthenticatedClientsAreRefused) {
  TempDir tmp("kiln_farm");
  const std::string certs = tmp.file("certs");
  const std::string other = tmp.file("other");
  ASSERT_EQ(run_kiln("certs init " + certs).exit_code, 0);
  ASSERT_EQ(run_kiln("certs init " + other).exit_code, 0);
  TrackerProcess tracker({"--listen", "127.0.0.1:0", "--certs", certs});
  ASSERT_FALSE(tracker.address().empty()) << tracker.output();

  TempDir ca_only("kiln_farm_ca");
  ASSERT_EQ(std::system(("cp " + certs + "/ca.pem " + ca_only.path()).c_str()), 0);
  auto status_code = [&](const ClientAuth& auth) {
    Ctx ctx;
    v1::FarmStatus reply;
    grpc::Status s = stub(tracker.address(), auth)->Status(&ctx, v1::StatusRequest(), &reply);
    return s.error_code();
  };
  EXPECT_EQ(status_code(ClientAuth{certs, "", false}), grpc::StatusCode::OK);
  EXPECT_EQ(status_code(ClientAuth{ca_only.path(), certs + "/token", false}), grpc::StatusCode::OK);
  // TLS but neither a client certificate nor a token.
  EXPECT_EQ(status_code(ClientAuth{ca_only.path(), "", false}), grpc::StatusCode::UNAUTHENTICATED);
  // Another farm's token.
  EXPECT_EQ(status_code(ClientAuth{ca_only.path(), other + "/token", false}),
            grpc::StatusCode::UNAUTHENTICATED);
  // A client certificate of another farm's CA, presented by a client that trusts this farm.
  TempDir stranger("kiln_farm_stranger");
  ASSERT_EQ(std::system(("cp " + certs + "/ca.pem " + other + "/client.pem " + other +
                         "/client.key " + stranger.path())
                            .c_str()),
            0);
  EXPECT_EQ(status_code(ClientAuth{stranger.path(), "", false}), grpc::StatusCode::UNAUTHENTICATED);
  kiln::testing::CommandResult refused =
      run_kiln("farm status --tracker " + tracker.address() + " --certs " + stranger.path());
  EXPECT_THAT(refused.output, HasSubstr("the client certificate is not signed by this farm's CA"));
  // The farm's own server certificate is not a client's.
  TempDir server_as_client("kiln_farm_server_as_client");
  ASSERT_EQ(std::system(("cp " + certs + "/ca.pem " + server_as_client.path() + " && cp " + certs +
                         "/server.pem " + server_as_client.path() + "/client.pem && cp " + certs +
                         "/server.key " + server_as_client.path() + "/client.key")
                            .c_str()),
            0);
  EXPECT_EQ(status_code(ClientAuth{server_as_client.path(), "", false}),
            grpc::StatusCode::UNAUTHENTICATED);
  // Another farm's CA: this client does not trust the server, the TLS handshake fails.
  EXPECT_EQ(status_code(ClientAuth{other, "", false}), grpc::StatusCode::UNAVAILABLE);
  // Plaintext against a TLS server.
  EXPECT_EQ(status_code(ClientAuth{"", "", true}), grpc::StatusCode::UNAVAILABLE);

  kiln::testing::CommandResult r =
      run_kiln("farm status --tracker " + tracker.address() + " --certs " + ca_only.path());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no client certificate and no bearer token"));
}

// A mutual-TLS-only farm (its certs directory has no token file): no bearer value authenticates,
// an empty one ("Bearer " and nothing after it) included; the farm's client certificate does.
TEST(FarmEndToEnd, WithoutATokenFileAnEmptyBearerIsRefusedAndClientCertificatesWork) {
  TempDir tmp("kiln_farm");
  const std::string certs = tmp.file("certs");
  ASSERT_EQ(run_kiln("certs init " + certs).exit_code, 0);
  ASSERT_EQ(::unlink((certs + "/token").c_str()), 0);
  TrackerProcess tracker({"--listen", "127.0.0.1:0", "--certs", certs});
  ASSERT_FALSE(tracker.address().empty()) << tracker.output();

  TempDir ca_only("kiln_farm_ca");
  ASSERT_EQ(std::system(("cp " + certs + "/ca.pem " + ca_only.path()).c_str()), 0);
  auto status_with = [&](const ClientAuth& auth, const std::string& authorization) {
    Ctx ctx;
    if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
    v1::FarmStatus reply;
    return stub(tracker.address(), auth)->Status(&ctx, v1::StatusRequest(), &reply);
  };
  for (const std::string& bearer : {std::string("Bearer "), std::string("Bearer")}) {
    grpc::Status s = status_with(ClientAuth{ca_only.path(), "", false}, bearer);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << "'" << bearer << "'";
    EXPECT_THAT(s.error_message(), HasSubstr("only client certificates"));
  }
  v1::RegisterRequest r = registration("box-bearer");
  {
    Ctx ctx;
    ctx.AddMetadata("authorization", "Bearer ");
    v1::RegisterReply reply;
    EXPECT_EQ(stub(tracker.address(), ClientAuth{ca_only.path(), "", false})
                  ->Register(&ctx, r, &reply)
                  .error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  EXPECT_EQ(status_with(ClientAuth{certs, "", false}, "").error_code(), grpc::StatusCode::OK);
  EXPECT_EQ(farm_status_json("--tracker " + tracker.address() + " --certs " + certs)["keys"].size(),
            0u);
}

TEST(FarmEndToEnd, NonLoopbackWithoutTlsIsRefusedUnlessInsecure) {
  {
    TrackerProcess refused({"--listen", "0.0.0.0:0"});
    EXPECT_EQ(refused.wait_exit(), 2);
    EXPECT_THAT(refused.output(), HasSubstr("refusing to listen on 0.0.0.0:0 without TLS"));
  }
  TrackerProcess open({"--listen", "0.0.0.0:0", "--insecure"});
  ASSERT_FALSE(open.address().empty()) << open.output();
  EXPECT_THAT(open.output(), HasSubstr("WITHOUT TLS OR AUTHENTICATION (--insecure)"));
  const std::string port = open.address().substr(open.address().rfind(':') + 1);
  nlohmann::json st = farm_status_json("--tracker 127.0.0.1:" + port + " --insecure");
  EXPECT_EQ(st["keys"].size(), 0u);

  // With TLS, another address needs no --insecure.
  TempDir tmp("kiln_farm");
  ASSERT_EQ(run_kiln("certs init " + tmp.file("certs")).exit_code, 0);
  TrackerProcess tls({"--listen", "0.0.0.0:0", "--certs", tmp.file("certs")});
  EXPECT_FALSE(tls.address().empty()) << tls.output();
  EXPECT_THAT(tls.output(), ::testing::Not(HasSubstr("WITHOUT TLS")));
}

TEST(FarmSecurity, ListenRule) {
  std::string warning;
  EXPECT_TRUE(check_listen_address("127.0.0.1:9190", false, false, &warning).ok());
  EXPECT_TRUE(check_listen_address("localhost:0", false, false, &warning).ok());
  EXPECT_TRUE(check_listen_address("[::1]:9190", false, false, &warning).ok());
  EXPECT_TRUE(warning.empty());
  Status s = check_listen_address("10.1.2.3:9190", false, false, &warning);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--certs DIR"));
  EXPECT_TRUE(check_listen_address("10.1.2.3:9190", true, false, &warning).ok());
  EXPECT_TRUE(warning.empty());
  EXPECT_TRUE(check_listen_address("[::]:9190", false, true, &warning).ok());
  EXPECT_THAT(warning, HasSubstr("WITHOUT TLS"));
  for (const char* bad : {"9190", ":9190", "host:", "host:99999", "host:12a"}) {
    EXPECT_EQ(check_listen_address(bad, true, false, &warning).code(), StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_FALSE(is_loopback_host("128.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.4.5.6"));
}

}  // namespace
}  // namespace kiln::farm
