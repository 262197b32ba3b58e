// The tracker SIGKILLed in the middle of a `kiln tune --tracker` (real tracker, runner and tune
// processes): the tune stops after the batch, exits 1 and names the tracker; what it recorded
// as runner_lost is measured again when the same command runs once the tracker is back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/farm/farm_fixture.h"

namespace kiln::farm {
namespace {

using ::testing::HasSubstr;
using testing::KilnProcess;
using testing::Record;
using testing::records;
using testing::wait_until;

class TrackerLost : public testing::FarmFixture {
 protected:
  // Frequent heartbeats: the runner finds the restarted tracker (and registers again) quickly.
  std::vector<std::string> tracker_args() const override { return {"--heartbeat-interval", "0.3"}; }
};

TEST_F(TrackerLost, TuneFailsNamingTheTrackerAndTheResumeMeasuresTheLostConfigsAgain) {
  std::unique_ptr<KilnProcess> r1 = start_runner("r1");
  ASSERT_NE(r1, nullptr);
  const std::string db = dir_.file("t.db");
  const std::string address = tracker_->address();
  const int kTrials = 24;
  const std::vector<std::string> args = tune_args(db, "dense:M=32,N=64,K=32", kTrials, 0.25);

  auto tune = std::make_unique<KilnProcess>(args, "");
  ASSERT_TRUE(wait_until(120, [&] { return trials_of("r1") > 0; })) << status();
  ASSERT_TRUE(tune->running()) << "the tune finished too soon: " << tune->output();
  tracker_->kill_now();
  EXPECT_EQ(tune->wait_exit(), 1) << tune->output();
  EXPECT_THAT(tune->output(), HasSubstr("the tracker at " + address + " is lost"));
  EXPECT_THAT(tune->output(), HasSubstr("run the same command once the farm is back"));

  std::set<int64_t> lost, measured;
  for (const Record& r : records(db)) (r.runner_lost ? lost : measured).insert(r.config_index);
  ASSERT_FALSE(lost.empty()) << tune->output();
  ASSERT_LT(measured.size(), static_cast<size_t>(kTrials));

  // The tracker back on its address; the runner registers with it again.
  tracker_ = std::make_unique<KilnProcess>(
      std::vector<std::string>{"tracker", "--listen", address, "--certs", certs_,
                               "--heartbeat-interval", "0.3"},
      "kiln tracker listening on ");
  ASSERT_EQ(tracker_->address(), address) << tracker_->output();
  ASSERT_TRUE(wait_until(60, [&] { return state_of("r1") == "free"; })) << status();

  kiln::testing::CommandResult again = kiln::testing::run_kiln(joined(args));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  std::set<int64_t> ok;
  for (const Record& r : records(db)) {
    if (r.error_no == 0) ok.insert(r.config_index);
  }
  for (int64_t c : lost) EXPECT_TRUE(ok.count(c)) << "config " << c << ": " << again.output;
  EXPECT_EQ(ok.size(), static_cast<size_t>(kTrials)) << again.output;
}

}  // namespace
}  // namespace kiln::farm
