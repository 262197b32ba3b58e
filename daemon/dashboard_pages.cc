#include "daemon/dashboard_pages.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace kiln::daemon {

namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

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
#updated{color:#888;font-size:.9em}
</style>)";

}  // namespace

std::string refresh_in_place_script(double refresh_seconds) {
  if (refresh_seconds <= 0) return "";
  char every[32];
  std::snprintf(every, sizeof every, "%.0f", refresh_seconds * 1000);
  return std::string(R"(<script>
(function () {
  var every = )") +
         every + R"(, refreshes = 0;
  function tick() {
    fetch(location.pathname, {credentials: 'same-origin', cache: 'no-store'})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('content');
        var old = document.getElementById('content');
        if (fresh && old) {
          old.replaceWith(document.importNode(fresh, true));
          document.body.dataset.refreshes = String(++refreshes);
        }
      })
      .catch(function () {})
      .then(function () { setTimeout(tick, every); });
  }
  setTimeout(tick, every);
})();
</script>)";
}

std::string dashboard_index_html(const std::vector<JobView>& jobs, double refresh_seconds) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>kiln serve: jobs</title>" +
      std::string(kStyle) + "</head>\n<body data-refreshes=\"0\">\n<h1>kiln serve: jobs</h1>\n";
  html += "<div id=\"content\">\n<p id=\"updated\">as of " + utc_now_text() + "</p>\n";
  if (jobs.empty()) {
    html += "<p id=\"no-jobs\">No jobs yet: <code>kiln submit JOB.yaml</code>.</p>\n";
  } else {
    html +=
        "<table id=\"jobs\"><thead><tr><th>id</th><th>name</th><th>state</th><th>trials</th>"
        "<th>priority</th><th>tuning time</th><th>est. latency</th></tr></thead><tbody>\n";
    for (const JobView& j : jobs) {
      const std::string id = std::to_string(j.row.id);
      const std::string state = store::job_state_name(j.row.state);
      std::string latency = "-";
      if (j.progress.latency_s > 0) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%s%.4f ms", j.progress.latency_complete ? "" : "&ge; ",
                      j.progress.latency_s * 1e3);
        latency = buf;
      }
      html +=
          "<tr class=\"job\" data-job=\"" + id + "\"><td class=\"num\">" + id +
          "</td><td><a href=\"/job/" + id + "\">" +
          escape(j.row.name.empty() ? "job " + id : j.row.name) +
          "</a></td><td><span class=\"state-" + state + "\">" + state + "</span>" +
          (j.row.reason.empty() ? ""
                                : " <span class=\"reason\">" + escape(j.row.reason) + "</span>") +
          "</td><td class=\"num trials\">" + std::to_string(j.records) + "</td><td class=\"num\">" +
          std::to_string(j.row.priority) + "</td><td class=\"num\">" + elapsed_text(j.row.seconds) +
          "</td><td class=\"num\">" + latency + "</td></tr>\n";
    }
    html += "</tbody></table>\n";
  }
  html += "</div>\n<p><a href=\"/metrics\">/metrics</a> (Prometheus)</p>\n";
  html += refresh_in_place_script(refresh_seconds);
  html += "</body></html>\n";
  return html;
}

}  // namespace kiln::daemon
