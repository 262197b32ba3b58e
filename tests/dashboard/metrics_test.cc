// /metrics: Prometheus' text exposition format (HELP/TYPE lines, label escaping, numbers) and
// the daemon's metrics tallied from a real store's records (dashboard/job_metrics.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dashboard/job_metrics.h"
#include "dashboard/prometheus_text.h"
#include "store/job_store.h"
#include "store/open_store.h"
#include "tests/dashboard/job_view.h"
#include "tests/dashboard/prometheus_parse.h"
#include "tests/temp_dir.h"

namespace kiln::dashboard {
namespace {

using kiln::testing::parse_exposition;

TEST(PrometheusText, FamiliesSamplesAndEscaping) {
  PrometheusText t;
  t.family("kiln_x_total", "counter", "A help text\nwith a newline and a \\ backslash.");
  t.sample({{"job", "1"}, {"name", "a \"quoted\"\nname\\"}}, 3);
  t.sample({}, 0.25);
  t.family("kiln_y", "gauge", "Y.");
  t.sample({{"state", "queued"}}, std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.text(),
            "# HELP kiln_x_total A help text\\nwith a newline and a \\\\ backslash.\n"
            "# TYPE kiln_x_total counter\n"
            "kiln_x_total{job=\"1\",name=\"a \\\"quoted\\\"\\nname\\\\\"} 3\n"
            "kiln_x_total 0.25\n"
            "# HELP kiln_y Y.\n"
            "# TYPE kiln_y gauge\n"
            "kiln_y{state=\"queued\"} +Inf\n");
  testing::Exposition e = parse_exposition(t.text());
  EXPECT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors);
  EXPECT_EQ(e.value("kiln_x_total{job=\"1\",name=\"a \"quoted\"\nname\\\"}"), 3);
  EXPECT_EQ(e.types["kiln_y"], "gauge");
}

TEST(PrometheusText, NumbersReadBackExactly) {
  EXPECT_EQ(prometheus_number(42), "42");
  EXPECT_EQ(prometheus_number(-3), "-3");
  EXPECT_EQ(prometheus_number(0.1), "0.1");
  EXPECT_EQ(prometheus_number(std::nan("")), "NaN");
  EXPECT_EQ(prometheus_number(-std::numeric_limits<double>::infinity()), "-Inf");
  for (double v : {2.3574446930000001, 7.862e-06, 1e20, 123456789.125}) {
    EXPECT_EQ(std::strtod(prometheus_number(v).c_str(), nullptr), v) << prometheus_number(v);
  }
}

TEST(PrometheusParse, RejectsBrokenExpositions) {
  EXPECT_FALSE(parse_exposition("kiln_a 1\n").errors.empty());  // no family declared
  EXPECT_FALSE(
      parse_exposition("# HELP a A.\n# TYPE a gauge\na{x=\"unterminated} 1\n").errors.empty());
  EXPECT_FALSE(parse_exposition("# HELP a A.\n# TYPE a gauge\na one\n").errors.empty());
  EXPECT_FALSE(parse_exposition("# HELP a A.\n# TYPE a gauge\na 1").errors.empty());
  EXPECT_FALSE(parse_exposition("# HELP a A.\n# TYPE a gauge\n# HELP a A.\n# TYPE a gauge\n")
                   .errors.empty());
}

store::Record job_record(int64_t job, int64_t index, int error_no) {
  store::Record r;
  r.target = "llvm -mcpu=x86-64";
  r.task_name = "dense_nopack.x86";
  r.workload = "dense:M=8,N=8,K=8";
  r.config_index = index;
  r.entities = nlohmann::json::array({nlohmann::json::array({"tile_y", "sp", {-1, 1}})});
  r.error_no = error_no;
  if (error_no == 0) r.costs = {1e-6};
  r.error_msg = error_no == 0 ? "" : "it broke";
  r.all_cost = 0.1;
  r.timestamp = 1.7e9 + static_cast<double>(index);
  r.flop = 1024;
  r.source = store::job_source(job);
  return r;
}

TEST(JobMetrics, TalliesTrialsAndErrorsPerJobIncrementally) {
  testing::TempDir dir;
  const std::string db = dir.file("k.db");
  auto store = store::open_store(db);
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE((*store)
                  ->append({job_record(1, 0, 0), job_record(1, 1, 2), job_record(1, 2, 5),
                            job_record(2, 3, 0)})
                  .ok());
  store::Record other = job_record(1, 4, 2);
  other.source = "kiln tune";  // not a job's: counted nowhere
  ASSERT_TRUE((*store)->append({other}).ok());

  auto metrics = JobMetrics::open(db);
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  std::vector<daemon::JobView> jobs = {
      testing::job_view(1, "with \"quotes\"", store::JobState::kRunning, 12.5),
      testing::job_view(2, "b", store::JobState::kQueued, 12.5),
      testing::job_view(3, "c", store::JobState::kQueued, 12.5)};
  jobs[0].progress.latency_s = 0.002;
  jobs[0].progress.latency_complete = true;
  Result<std::string> text = (*metrics)->render(jobs, daemon::MeasureGate::Load{1, true});
  ASSERT_TRUE(text.ok()) << text.status().message();
  testing::Exposition e = parse_exposition(*text);
  ASSERT_TRUE(e.errors.empty()) << ::testing::PrintToString(e.errors) << *text;
  const std::string j1 = "job=\"1\",name=\"with \"quotes\"\"";
  EXPECT_EQ(e.types["kiln_job_trials_total"], "counter");
  EXPECT_EQ(e.value("kiln_job_trials_total{" + j1 + "}"), 3);
  EXPECT_EQ(e.value("kiln_job_trials_total{job=\"2\",name=\"b\"}"), 1);
  EXPECT_EQ(e.value("kiln_job_trials_total{job=\"3\",name=\"c\"}"), 0);
  EXPECT_EQ(e.types["kiln_job_errors_total"], "counter");
  EXPECT_EQ(e.value("kiln_job_errors_total{" + j1 + ",error=\"COMPILE_HOST\"}"), 1);
  EXPECT_EQ(e.value("kiln_job_errors_total{" + j1 + ",error=\"WRONG_ANSWER\"}"), 1);
  EXPECT_EQ(e.value("kiln_job_errors_total{" + j1 + ",error=\"RUN_TIMEOUT\"}"), 0);
  EXPECT_EQ(e.value("kiln_job_errors_total{" + j1 + ",error=\"NO_ERROR\"}"), -1);  // not an error
  EXPECT_EQ(e.value("kiln_job_tuning_seconds_total{" + j1 + "}"), 12.5);
  EXPECT_EQ(e.value("kiln_job_estimated_latency_seconds{" + j1 + "}"), 0.002);
  EXPECT_EQ(e.value("kiln_job_estimated_latency_seconds{job=\"2\",name=\"b\"}"), -1);  // unknown
  EXPECT_EQ(e.types["kiln_jobs"], "gauge");
  EXPECT_EQ(e.value("kiln_jobs{state=\"queued\"}"), 2);
  EXPECT_EQ(e.value("kiln_jobs{state=\"running\"}"), 1);
  EXPECT_EQ(e.value("kiln_jobs{state=\"done\"}"), 0);
  EXPECT_EQ(e.value("kiln_measure_gate_waiting"), 1);
  EXPECT_EQ(e.value("kiln_measure_gate_held"), 1);

  // Records committed after a scrape are counted by the next one, and only once.
  ASSERT_TRUE((*store)->append({job_record(1, 5, 7), job_record(1, 6, 0)}).ok());
  for (int scrape = 0; scrape < 2; ++scrape) {
    text = (*metrics)->render(jobs, daemon::MeasureGate::Load{});
    ASSERT_TRUE(text.ok());
    e = parse_exposition(*text);
    EXPECT_EQ(e.value("kiln_job_trials_total{" + j1 + "}"), 5);
    EXPECT_EQ(e.value("kiln_job_errors_total{" + j1 + ",error=\"RUN_TIMEOUT\"}"), 1);
    EXPECT_EQ(e.value("kiln_measure_gate_held"), 0);
  }
}

TEST(JobMetrics, AMissingStoreIsAClearError) {
  testing::TempDir dir;
  auto metrics = JobMetrics::open(dir.file("absent.db"));
  ASSERT_FALSE(metrics.ok());
  EXPECT_NE(metrics.status().message().find("absent.db"), std::string::npos)
      << metrics.status().message();
}

TEST(JobSource, RoundTripsAndRejectsOtherSources) {
  EXPECT_EQ(store::job_of_source(store::job_source(42)), 42);
  EXPECT_EQ(store::job_of_source("kiln tune"), std::nullopt);
  EXPECT_EQ(store::job_of_source("kiln serve job "), std::nullopt);
  EXPECT_EQ(store::job_of_source("kiln serve job 4x"), std::nullopt);
  EXPECT_EQ(store::job_of_source("kiln serve job 99999999999999999999999"), std::nullopt);
}

}  // namespace
}  // namespace kiln::dashboard
