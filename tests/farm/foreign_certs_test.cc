// A client or runner given another farm's certificates (both from `kiln certs init`) against a
// real `kiln tracker`, `kiln builder` or `kiln serve`: the TLS handshake fails on the client's
// side, which gRPC reports only as UNAVAILABLE. The runner stops at once; `kiln farm status`,
// `kiln tune` (its tracker and its --builders) and `kiln jobs` say that the server's certificate
// is not signed by the CA they were given, naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "tests/farm/farm_fixture.h"

namespace kiln::farm {
namespace {

using kiln::testing::CommandResult;
using kiln::testing::run_kiln;
using ::testing::HasSubstr;

class ForeignCerts : public testing::FarmFixture {
 protected:
  void SetUp() override {
    FarmFixture::SetUp();
    ASSERT_EQ(run_kiln("certs init " + other_).exit_code, 0);
  }
  // What every client given other_ says about the tracker's certificate.
  std::string untrusted() const {
    return "the server at " + tracker_->address() + " presents a certificate (subject ";
  }
  std::string not_signed() const { return "not signed by the CA in " + other_ + "/ca.pem"; }

  std::string other_ = dir_.file("other");
};

TEST_F(ForeignCerts, RunnerStopsAtOnceSayingTheTrackersCertificateIsNotSignedByItsCa) {
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = run_kiln("runner --tracker " + tracker_->address() +
                             " --key k1 --name stranger --register-wait 60 --certs " + other_);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cannot register with the tracker at " + tracker_->address()));
  EXPECT_THAT(r.output, HasSubstr(untrusted()));
  EXPECT_THAT(r.output, HasSubstr(not_signed()));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("trying again")));
  EXPECT_LT(took, 20) << "retried for --register-wait: " << r.output;
  // The farm's own certificates still register.
  EXPECT_NE(start_runner("r1"), nullptr);
}

TEST_F(ForeignCerts, FarmStatusAndTuneNameTheUntrustedCertificate) {
  CommandResult st =
      run_kiln("farm status --tracker " + tracker_->address() + " --certs " + other_);
  EXPECT_EQ(st.exit_code, 2) << st.output;
  EXPECT_THAT(st.output, HasSubstr(untrusted()));
  EXPECT_THAT(st.output, HasSubstr(not_signed()));
  EXPECT_THAT(st.output, ::testing::Not(HasSubstr("Socket closed")));

  std::vector<std::string> args = tune_args(dir_.file("t.db"), "dense:M=32,N=64,K=32", 8, 0, 8);
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--certs") args[i + 1] = other_;
  }
  CommandResult tune = run_kiln(joined(args));
  EXPECT_NE(tune.exit_code, 0) << tune.output;
  EXPECT_THAT(tune.output, HasSubstr("the tracker at " + tracker_->address() + " is lost: "));
  EXPECT_THAT(tune.output, HasSubstr(not_signed()));
}

// A tune whose --builders serve another farm's certificate records why no builder built a config.
TEST_F(ForeignCerts, ConfigsNoBuilderBuiltNameTheBuildersUntrustedCertificate) {
  testing::KilnProcess builder({"builder", "--listen", "127.0.0.1:0", "--certs", certs_},
                               "kiln builder listening on ");
  ASSERT_FALSE(builder.address().empty()) << builder.output();
  const std::string db = dir_.file("b.db");
  CommandResult tune = run_kiln(
      "tune --template dense_pack.x86 --workload dense:M=32,N=64,K=32 --tuner random --trials 2 "
      "--n-parallel 2 --db " +
      db + " --builders " + builder.address() + " --certs " + other_);
  std::vector<testing::Record> rs = testing::records(db);
  ASSERT_EQ(rs.size(), 2u) << tune.output;
  for (const testing::Record& r : rs) {
    EXPECT_THAT(r.message, HasSubstr("the server at " + builder.address() +
                                     " presents a certificate (subject "));
    EXPECT_THAT(r.message, HasSubstr(not_signed()));
  }
}

// kiln serve's clients (kiln jobs here) given another farm's certificates say so too.
TEST_F(ForeignCerts, ServeClientsNameTheDaemonsUntrustedCertificate) {
  testing::KilnProcess serve(
      {"serve", "--listen", "127.0.0.1:0", "--certs", certs_, "--db", dir_.file("serve.db")},
      "kiln serve listening on ");
  ASSERT_FALSE(serve.address().empty()) << serve.output();
  CommandResult jobs = run_kiln("jobs --server " + serve.address() + " --certs " + other_);
  EXPECT_EQ(jobs.exit_code, 2) << jobs.output;
  EXPECT_THAT(jobs.output,
              HasSubstr("the server at " + serve.address() + " presents a certificate (subject "));
  EXPECT_THAT(jobs.output, HasSubstr(not_signed()));
  EXPECT_EQ(run_kiln("jobs --server " + serve.address() + " --certs " + certs_).exit_code, 0);
}

// The farm's own CA but an address the server certificate does not name: said so, with the fix.
TEST_F(ForeignCerts, FarmStatusSaysWhenTheServerCertificateDoesNotNameTheAddress) {
  testing::KilnProcess open({"tracker", "--listen", "0.0.0.0:0", "--certs", certs_},
                            "kiln tracker listening on ");
  const std::string port = open.line().substr(open.line().find("0.0.0.0:") + 8);
  const std::string other_address = "127.0.0.2:" + port.substr(0, port.find(' '));
  CommandResult st = run_kiln("farm status --tracker " + other_address + " --certs " + certs_);
  EXPECT_EQ(st.exit_code, 2) << st.output;
  EXPECT_THAT(st.output,
              HasSubstr("the server at " + other_address + " presents a certificate (subject "));
  EXPECT_THAT(st.output, HasSubstr("that does not name 127.0.0.2 (kiln certs init --host"));
}

}  // namespace
}  // namespace kiln::farm
