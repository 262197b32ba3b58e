// The dashboard's index page (dashboard/index_page.h): one row per job linking to its live view,
// everything a job file chose (its name, a failure's reason) escaped, and the in-place refresh
// only on a live page.
#include "dashboard/index_page.h"

#include <gtest/gtest.h>

#include "tests/dashboard/job_view.h"

namespace kiln::dashboard {
namespace {

daemon::JobView job(int64_t id, const std::string& name, store::JobState state) {
  daemon::JobView v = testing::job_view(id, name, state, 3725);
  v.row.priority = 3;
  v.records = 42;
  return v;
}

TEST(IndexPage, OneRowPerJobWithItsLink) {
  daemon::JobView a = job(1, "resnet18", store::JobState::kRunning);
  a.progress.latency_s = 0.0123;
  a.progress.latency_complete = false;
  a.row.owner = "tuner-7:4242:0123abcd";  // the daemon running it
  daemon::JobView b = job(2, "", store::JobState::kFailed);
  b.row.reason = "run_on: the farm's runners are gone";
  std::string html = dashboard_index_html({a, b}, 5);
  EXPECT_NE(html.find("<tr class=\"job\" data-job=\"1\">"), std::string::npos) << html;
  EXPECT_NE(html.find("<a href=\"/job/1\">resnet18</a>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"/job/2\">job 2</a>"), std::string::npos);  // unnamed
  EXPECT_NE(html.find("class=\"num trials\">42<"), std::string::npos);
  EXPECT_NE(html.find("1h02m05s"), std::string::npos);
  EXPECT_NE(html.find("&ge; 12.3000 ms"), std::string::npos);  // a lower bound so far
  EXPECT_NE(html.find("<span class=\"host\">on tuner-7:4242</span>"), std::string::npos) << html;
  EXPECT_NE(html.find("run_on: the farm&#39;s runners are gone"), std::string::npos) << html;
  EXPECT_NE(html.find("<div id=\"kiln-content\">"), std::string::npos);
  EXPECT_NE(html.find("<span id=\"kiln-refresh\">"), std::string::npos);
  EXPECT_NE(html.find("var ms=5000;"), std::string::npos);  // report::live_refresh_script
}

// The budget a job file gave and how far the job has got towards the part of it reached first.
TEST(IndexPage, ShowsEachJobsBudgetAndProgress) {
  daemon::JobView trials = job(1, "trials", store::JobState::kRunning);
  trials.row.spec = "workloads: [\"dense:M=16,N=16,K=16\"]\nbudget: {trials: 200, time: 2h}\n";
  trials.progress.trials = 50;  // 25 %; 3725 s of 2 h is 52 %: time is reached first
  daemon::JobView per_task = job(2, "per task", store::JobState::kRunning);
  per_task.row.spec = "workloads: [\"dense:M=16,N=16,K=16\"]\nbudget: {trials_per_task: 10}\n";
  per_task.progress.tasks.resize(2);
  per_task.progress.tasks[0].trials = 10;
  per_task.progress.tasks[1].trials = 25;  // capped at 10: the task is done
  daemon::JobView broken = job(3, "broken", store::JobState::kFailed);
  broken.row.spec = "model: /nonexistent/gone.onnx\n";
  std::string html = dashboard_index_html({trials, per_task, broken}, 0);
  EXPECT_NE(html.find("<th>budget</th><th>progress</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"budget\">200 trials, 2h00m00s tuning</td>"), std::string::npos)
      << html;
  EXPECT_NE(html.find("52 % (1h02m05s of 2h00m00s)"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"budget\">10 trials per task</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("100 % (20 of 20 task trials)"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"budget\">-</td>"), std::string::npos) << html;  // unreadable
}

TEST(IndexPage, EscapesWhatTheJobFileChose) {
  std::string html =
      dashboard_index_html({job(7, "<script>alert(1)</script>\"&", store::JobState::kQueued)}, 5);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;"), std::string::npos)
      << html;
}

TEST(IndexPage, NoJobsAndNoRefresh) {
  std::string html = dashboard_index_html({}, 0);
  EXPECT_NE(html.find("No jobs yet"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // a static page runs nothing
}

}  // namespace
}  // namespace kiln::dashboard
