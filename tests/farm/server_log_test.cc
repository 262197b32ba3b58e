// The farm's servers log through kiln's log (common/log.h): timestamped lines naming the program
// and the level, --log-level / -v / -q, and gRPC's own handshake errors turned into one kiln line
// that names the cause (farm/grpc_log.h). Real `kiln tracker` and `kiln runner` processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>
#include <sstream>

#include "farm/grpc_log.h"
#include "tests/farm/farm_fixture.h"

namespace kiln::farm {
namespace {

using kiln::testing::CommandResult;
using kiln::testing::run_kiln;
using ::testing::HasSubstr;
using ::testing::Not;

// The lines of `output` that are log lines of `program` (the others: the ready line on stdout).
std::vector<std::string> log_lines(const std::string& output, const std::string& program) {
  std::vector<std::string> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.find(program + " ") != std::string::npos && !line.starts_with(program)) {
      out.push_back(line);
    }
  }
  return out;
}

const std::regex kTimestamped(
    R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z kiln (tracker|runner) (debug|info|warning|error): .+)");

TEST(HandshakeFailureReason, NamesTheCauseOfOpenSslAndBoringSslSpellings) {
  EXPECT_THAT(handshake_failure_reason(
                  "Handshake failed with fatal error SSL_ERROR_SSL: error:0A000086:SSL "
                  "routines::certificate verify failed."),
              HasSubstr("the peer's certificate is not signed by this farm's CA"));
  EXPECT_THAT(handshake_failure_reason("Handshake failed with fatal error SSL_ERROR_SSL: "
                                       "error:1000007d:SSL routines:OPENSSL_internal:"
                                       "CERTIFICATE_VERIFY_FAILED."),
              HasSubstr("the peer's certificate is not signed by this farm's CA"));
  EXPECT_THAT(handshake_failure_reason("Handshake failed with fatal error SSL_ERROR_SSL: "
                                       "error:0A000418:SSL routines::tlsv1 alert unknown ca."),
              HasSubstr("the peer does not accept this side's certificate"));
  EXPECT_THAT(handshake_failure_reason("Handshake failed with fatal error SSL_ERROR_SSL: "
                                       "error:0A00010B:SSL routines::wrong version number."),
              HasSubstr("the peer does not speak TLS"));
  EXPECT_EQ(handshake_failure_reason("Handshake failed with fatal error SSL_ERROR_SSL: "
                                     "error:0A0000C1:SSL routines::something new."),
            "");
  EXPECT_EQ(handshake_failure_reason("certificate verify failed"), "");  // not a handshake
}

class ServerLog : public testing::FarmFixture {
 protected:
  // Stops the tracker with SIGTERM; everything it wrote.
  std::string stop_tracker() {
    tracker_->signal(SIGTERM);
    EXPECT_EQ(tracker_->wait_exit(), 0);
    return tracker_->output();
  }
};

// A plaintext client of the TLS tracker: the tracker says so in one kiln line naming the cause,
// and gRPC's own text never reaches its log. A client given another farm's CA says so in its
// error alone, without gRPC's line.
TEST_F(ServerLog, TrackerNamesWhyAHandshakeFailedInOneTimestampedLine) {
  const std::string other = dir_.file("other");
  ASSERT_EQ(run_kiln("certs init " + other).exit_code, 0);
  CommandResult foreign =
      run_kiln("farm status --tracker " + tracker_->address() + " --certs " + other);
  EXPECT_EQ(foreign.exit_code, 2) << foreign.output;
  EXPECT_THAT(foreign.output, HasSubstr("not signed by the CA in " + other + "/ca.pem"));
  EXPECT_THAT(foreign.output, Not(HasSubstr("Handshake failed"))) << foreign.output;
  EXPECT_THAT(foreign.output, Not(HasSubstr("ssl_transport_security"))) << foreign.output;
  EXPECT_NE(run_kiln("farm status --tracker " + tracker_->address() + " --insecure").exit_code, 0);
  std::unique_ptr<testing::KilnProcess> r1 = start_runner("r1");
  ASSERT_NE(r1, nullptr);
  r1.reset();
  const std::string out = stop_tracker();
  std::vector<std::string> lines = log_lines(out, "kiln tracker");
  ASSERT_FALSE(lines.empty()) << out;
  for (const std::string& line : lines) EXPECT_TRUE(std::regex_match(line, kTimestamped)) << line;
  EXPECT_THAT(out, HasSubstr("kiln tracker warning: a TLS handshake failed: the peer does not "
                             "speak TLS"));
  EXPECT_THAT(out, Not(HasSubstr("Handshake failed with fatal error")));
  EXPECT_THAT(out, HasSubstr("kiln tracker info: stopping (SIGTERM)"));
}

TEST_F(ServerLog, QuietShowsNoInfoLinesAndVerboseShowsDebugOnes) {
  testing::KilnProcess quiet({"tracker", "--listen", "127.0.0.1:0", "-q"},
                             "kiln tracker listening on ");
  ASSERT_FALSE(quiet.address().empty()) << quiet.output();
  quiet.signal(SIGTERM);
  EXPECT_EQ(quiet.wait_exit(), 0);
  EXPECT_THAT(quiet.output(), Not(HasSubstr(" info: "))) << quiet.output();

  testing::KilnProcess loud({"tracker", "--listen", "127.0.0.1:0", "--log-level", "debug"},
                            "kiln tracker listening on ");
  ASSERT_FALSE(loud.address().empty()) << loud.output();
  EXPECT_EQ(run_kiln("farm status --tracker " + loud.address() + " --insecure").exit_code, 0);
  loud.signal(SIGTERM);
  EXPECT_EQ(loud.wait_exit(), 0);
  EXPECT_THAT(loud.output(), HasSubstr("kiln tracker info: stopping (SIGTERM)"));
  EXPECT_THAT(loud.output(), HasSubstr("kiln tracker debug: grpc: ")) << loud.output();
}

TEST(ServerLogOptions, AnUnknownLevelOrVerboseWithQuietIsAUsageError) {
  CommandResult r = run_kiln("tracker --listen 127.0.0.1:0 --log-level loud");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("log level 'loud': expected debug, info, warn, error or off"));
  r = run_kiln("runner --tracker 127.0.0.1:1 --key k1 -v -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("excludes"));
  for (const char* command : {"serve", "builder", "tune"}) {
    r = run_kiln(std::string(command) + " --help");
    EXPECT_THAT(r.output, HasSubstr("--log-level")) << command;
    EXPECT_THAT(r.output, HasSubstr("-q,--quiet")) << command;
  }
}

}  // namespace
}  // namespace kiln::farm
