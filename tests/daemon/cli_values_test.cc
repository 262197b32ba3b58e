// Durations, seeds and names as users write them, in job files and on kiln tune's command line
// (issue 20): each malformed or absurd value is refused, naming the field and the value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/duration.h"
#include "jobs/job_spec.h"
#include "tests/run_kiln.h"

namespace kiln {
namespace {

using kiln::testing::run_kiln;
using ::testing::HasSubstr;

TEST(DurationTest, AcceptsWhatPeopleWrite) {
  EXPECT_EQ(*parse_duration("t", "8h"), 8 * 3600);
  EXPECT_EQ(*parse_duration("t", "1h30m"), 5400);
  EXPECT_EQ(*parse_duration("t", "1h30m15s"), 5415);
  EXPECT_EQ(*parse_duration("t", "90"), 90);
  EXPECT_EQ(*parse_duration("t", "1.5m"), 90);
}

TEST(DurationTest, RefusesTyposAndAbsurdValues) {
  for (const char* text : {"", "1h1h", "30m1h", "1s1m", "1h30", "-3h", "0", "0s", "h", "inf", "nan",
                           " 5", "+5", "5x", "1e999"}) {
    Result<double> d = parse_duration("--time", text);
    EXPECT_FALSE(d.ok()) << "'" << text << "' read as " << *d;
    if (!d.ok()) {
      EXPECT_THAT(d.status().message(), HasSubstr("--time: expected a positive duration")) << text;
    }
  }
  for (const char* text : {"99999999999999999999h", "1e308", "87601h"}) {
    Result<double> d = parse_duration("--time", text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.status().message(), "--time: '" + std::string(text) + "' is longer than 10 years");
  }
}

std::string job_error(const std::string& yaml) {
  Result<daemon::JobSpec> s = daemon::parse_job_spec(yaml, "job.yaml");
  return s.ok() ? "(accepted)" : s.status().message();
}

TEST(JobFileValues, RefusesDuplicateKeysNulBytesAndControlCharacters) {
  const std::string w = "workloads: [\"dense:M=16,N=16,K=16\"]\n";
  EXPECT_EQ(job_error(w + "budget: {trials: 5}\nbudget: {trials: 9}\n"),
            "job.yaml: budget: given twice (first on line 2) (line 3)");
  EXPECT_THAT(job_error(w + "budget: {trials: 5, trials: 9}\n"),
              HasSubstr("budget.trials: given twice"));
  EXPECT_THAT(job_error(w + "measure: {number: 1, number: 2}\n"),
              HasSubstr("measure.number: given twice"));
  EXPECT_THAT(job_error(w + "name: \"a\\0b\"\n"),
              HasSubstr("name: contains a NUL byte (at offset 1)"));
  EXPECT_THAT(job_error(w + "name: \"a\\e[2Jb\"\n"),
              HasSubstr("name: contains a control character (byte 0x1b at 1)"));
  EXPECT_THAT(job_error(w + "export: {tvm_log: \"x\\0.log\"}\n"),
              HasSubstr("export.tvm_log: contains a NUL byte"));
  EXPECT_THAT(job_error(w + "budget: {time: 99999999999999999999h}\n"),
              HasSubstr("budget.time: '99999999999999999999h' is longer than 10 years"));
  EXPECT_THAT(job_error(w + "budget: {time: 1h1h}\n"),
              HasSubstr("budget.time: expected a positive duration"));
  EXPECT_THAT(job_error(w + "budget: {time: 1e308}\n"), HasSubstr("longer than 10 years"));
  EXPECT_THAT(job_error(w + "# " + std::string(300 * 1024, 'x') + "\n"),
              HasSubstr("job.yaml: the job file is 307239 bytes; at most 262144 (256 KiB)"));
  EXPECT_EQ(job_error(w + "name: ok\n"), "(accepted)");
}

TEST(TuneCliValues, RefusesAnEmptyTimeAndSeedsOutOfRange) {
  const std::string tune =
      "tune --workload dense:M=16,N=16,K=16 --trials 1 --db /nonexistent/k.db ";
  testing::CommandResult r = run_kiln("tune m.onnx --db /nonexistent/k.db --time ''");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--time: expected a positive duration"));
  r = run_kiln("tune m.onnx --db /nonexistent/k.db --time 1h1h");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--time: expected a positive duration"));
  for (const char* seed : {"-1", "''", "99999999999999999999", "1.5"}) {
    r = run_kiln(tune + "--seed " + seed);
    EXPECT_EQ(r.exit_code, 2) << seed << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("--seed")) << seed;
  }
}

}  // namespace
}  // namespace kiln
