#include "dashboard/index_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "jobs/job_spec.h"
#include "report/report_html.h"
#include "report/svg_chart.h"

namespace kiln::dashboard {

namespace {

std::string elapsed_text(double seconds) {
  long long s = std::llround(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

std::string utc_now_text() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

constexpr const char* kStyle = R"(<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}th,td{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.state-running{color:#0a6}.state-failed{color:#c22}.state-done{color:#246}.reason{color:#666}
#as-of,.note{color:#888;font-size:.9em}
</style>)";

// A job's budget in words and how far it has got: the budget reached first ends the job, so the
// progress is the largest of its parts' fractions. "-" for a spec that cannot be read any more.
struct BudgetText {
  std::string budget = "-";
  std::string progress = "-";
  double fraction = 0;
};

BudgetText budget_of(const daemon::JobView& j) {
  BudgetText out;
  Result<daemon::JobSpec> spec =
      daemon::parse_job_spec(j.row.spec, "job " + std::to_string(j.row.id), j.row.base_dir);
  if (!spec.ok()) return out;
  daemon::JobBudget b = spec->budget;
  if (!b.trials && !b.trials_per_task && !b.seconds) b.trials_per_task = 1000;  // kiln tune's
  std::string budget, reached;
  auto part = [&](const std::string& what, double fraction, const std::string& detail) {
    budget += (budget.empty() ? "" : ", ") + what;
    if (fraction >= out.fraction) {
      out.fraction = fraction;
      reached = detail;
    }
  };
  if (b.trials) {
    part(std::to_string(*b.trials) + " trials",
         static_cast<double>(j.progress.trials) / static_cast<double>(*b.trials),
         std::to_string(j.progress.trials) + " of " + std::to_string(*b.trials) + " trials");
  }
  if (b.trials_per_task && !j.progress.tasks.empty()) {
    int64_t done = 0;
    for (const daemon::TaskProgress& t : j.progress.tasks) {
      done += std::min(t.trials, *b.trials_per_task);
    }
    const int64_t all = *b.trials_per_task * static_cast<int64_t>(j.progress.tasks.size());
    part(std::to_string(*b.trials_per_task) + " trials per task",
         static_cast<double>(done) / static_cast<double>(all),
         std::to_string(done) + " of " + std::to_string(all) + " task trials");
  } else if (b.trials_per_task) {
    budget +=
        (budget.empty() ? "" : ", ") + std::to_string(*b.trials_per_task) + " trials per task";
  }
  if (b.seconds) {
    part(elapsed_text(*b.seconds) + " tuning", j.row.seconds / *b.seconds,
         elapsed_text(j.row.seconds) + " of " + elapsed_text(*b.seconds));
  }
  out.budget = budget;
  out.fraction = std::min(1.0, out.fraction);
  if (!reached.empty()) {
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.0f %%", 100 * out.fraction);
    out.progress = std::string(percent) + " (" + reached + ")";
  }
  return out;
}

}  // namespace

std::string dashboard_index_html(const std::vector<daemon::JobView>& jobs, double refresh_seconds) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>kiln serve: jobs</title>" +
      std::string(kStyle) + "</head>\n<body>\n<h1>kiln serve: jobs</h1>\n";
  if (refresh_seconds > 0) {
    char every[64];
    std::snprintf(every, sizeof every, "Live: refreshed every %g s.", refresh_seconds);
    html += "<p class=\"note\">" + std::string(every) + " <span id=\"kiln-refresh\"></span></p>\n";
  }
  html += "<div id=\"kiln-content\">\n<p id=\"as-of\">as of " + utc_now_text() + "</p>\n";
  if (jobs.empty()) {
    html += "<p id=\"no-jobs\">No jobs yet: <code>kiln submit JOB.yaml</code>.</p>\n";
  } else {
    html +=
        "<table id=\"jobs\"><thead><tr><th>id</th><th>name</th><th>state</th><th>trials</th>"
        "<th>priority</th><th>tuning time</th><th>budget</th><th>progress</th>"
        "<th>est. latency</th></tr></thead><tbody>\n";
    for (const daemon::JobView& j : jobs) {
      const std::string id = std::to_string(j.row.id);
      const std::string state = store::job_state_name(j.row.state);
      const BudgetText budget = budget_of(j);
      std::string latency = "-";
      if (j.progress.latency_s > 0) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%s%.4f ms", j.progress.latency_complete ? "" : "&ge; ",
                      j.progress.latency_s * 1e3);
        latency = buf;
      }
      html += "<tr class=\"job\" data-job=\"" + id + "\"><td class=\"num\">" + id +
              "</td><td><a href=\"/job/" + id + "\">" +
              report::escape_xml(j.row.name.empty() ? "job " + id : j.row.name) +
              "</a></td><td><span class=\"state-" + state + "\">" + state + "</span>" +
              (j.row.state == store::JobState::kRunning && !j.row.owner.empty()
                   ? " <span class=\"host\">on " +
                         report::escape_xml(store::owner_host(j.row.owner)) + "</span>"
                   : "") +
              (j.row.reason.empty()
                   ? ""
                   : " <span class=\"reason\">" + report::escape_xml(j.row.reason) + "</span>") +
              "</td><td class=\"num trials\">" + std::to_string(j.records) +
              "</td><td class=\"num\">" + std::to_string(j.row.priority) +
              "</td><td class=\"num\">" + elapsed_text(j.row.seconds) +
              "</td><td class=\"budget\">" + report::escape_xml(budget.budget) +
              "</td><td class=\"progress\"><progress max=\"1\" value=\"" +
              std::to_string(budget.fraction) + "\"></progress> " +
              report::escape_xml(budget.progress) + "</td><td class=\"num\">" + latency +
              "</td></tr>\n";
    }
    html += "</tbody></table>\n";
  }
  html += "</div>\n<p><a href=\"/metrics\">/metrics</a> (Prometheus)</p>\n";
  if (refresh_seconds > 0) html += report::live_refresh_script(refresh_seconds);
  html += "</body></html>\n";
  return html;
}

}  // namespace kiln::dashboard
