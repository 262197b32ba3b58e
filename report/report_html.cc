#include "report/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "report/svg_chart.h"

namespace kiln::report {

namespace {

constexpr const char* kStyle = R"css(
body{font-family:sans-serif;margin:24px;color:#222;background:#fafafa;max-width:1200px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:22px 0 6px;font-family:monospace}
table{border-collapse:collapse;margin:8px 0;font-size:13px;background:#fff}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f0f0f0}
td.l,th.l{text-align:left}pre{background:#fff;border:1px solid #ddd;padding:6px;font-size:12px;
white-space:pre-wrap;word-break:break-all}.note{color:#555;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:10px}svg.chart{background:#fff;border:1px solid #ddd}
.empty{padding:12px;border:1px dashed #999;background:#fff}
)css";

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string esc(const std::string& s) { return escape_xml(s); }

// TVM's name of an error number, without the report depending on the store's spelling twice.
std::string kind_name(int error_no) { return store::error_no_name(error_no); }

// A fixed colour per error kind, so a kind looks the same in every chart.
const std::string& error_color(int error_no) {
  static const std::map<int, std::string> kColors = {{1, "#9467bd"}, {2, "#8c564b"}, {3, "#e377c2"},
                                                     {4, "#d62728"}, {5, "#ff7f0e"}, {6, "#17becf"},
                                                     {7, "#bcbd22"}, {8, "#7f7f7f"}};
  static const std::string kOther = "#000000";
  auto it = kColors.find(error_no);
  return it == kColors.end() ? kOther : it->second;
}

Marker error_marker(int error_no) {
  switch (error_no) {
    case 1:
      return Marker::kDiamond;
    case 2:
      return Marker::kSquare;
    case 4:
      return Marker::kCross;
    case 5:
      return Marker::kTriangle;
    case 6:
      return Marker::kPlus;
    case 7:
      return Marker::kStar;
    default:
      return Marker::kSquare;
  }
}

std::string td(const std::string& s, bool left = false) {
  return std::string(left ? "<td class=\"l\">" : "<td>") + esc(s) + "</td>";
}

std::string seconds_text(double s) { return fmt(s >= 100 ? "%.0f" : "%.2f", s); }

std::string latency_text(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  return fmt("%.4f", seconds * 1e3) + " ms";
}

std::string header(const ReportData& d, const RenderOptions& o) {
  std::string out = "<h1>" + esc(o.title.empty() ? d.title : o.title) + "</h1>";
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  out += "<p class=\"note\">Scope: " + esc(d.scope) + ". Store: " + esc(d.db_path) + ". " +
         std::to_string(d.records) + " records, " + std::to_string(d.tasks.size()) +
         " tasks. Made " + when + ".</p>";
  if (d.records == 0) {
    out += "<p class=\"empty\" id=\"no-records\">The store holds no records";
    out += d.tasks.empty() ? "." : " for this scope yet.";
    out += "</p>";
  }
  return out;
}

// What to do next: the tasks that carry most of the estimate, or the workloads not measured yet.
std::string next_step(const ModelData& m, const std::string& db_path) {
  std::vector<const ModelTaskShare*> by_share;
  int unmeasured = 0;
  for (const ModelTaskShare& t : m.tasks) {
    if (t.share > 0) by_share.push_back(&t);
    unmeasured += !std::isfinite(t.best_s);
  }
  std::string out = "<p id=\"next-step\"><b>Next:</b> ";
  if (!m.complete) {
    out += std::to_string(unmeasured) +
           " tasks have no measurement yet, so the estimate leaves their workloads out: tune "
           "the model further (<code>kiln tune " +
           esc(m.model) + " --db " + esc(db_path) +
           "</code>) and every task gets its default config measured first.</p>";
    return out;
  }
  std::stable_sort(by_share.begin(), by_share.end(),
                   [](const auto* a, const auto* b) { return a->share > b->share; });
  out += "most of the estimated latency is in ";
  double covered = 0;
  for (size_t i = 0; i < by_share.size() && i < 3; ++i) {
    out += std::string(i == 0                                          ? ""
                       : i + 1 == std::min<size_t>(3, by_share.size()) ? " and "
                                                                       : ", ") +
           "<code>" + esc(by_share[i]->label) + "</code> (" +
           fmt("%.0f", 100 * by_share[i]->share) + " %)";
    covered += by_share[i]->share;
  }
  out += ": " + fmt("%.0f", 100 * covered) +
         " % of it. More tuning time goes to them first (<code>kiln tune " + esc(m.model) +
         " --db " + esc(db_path) +
         " --time 30m</code>; the gradient scheduler picks the tasks "
         "whose improvement lowers the estimate most).</p>";
  return out;
}

std::string model_section(const ModelData& m, const std::string& db_path) {
  std::string out = "<h2>Model</h2>";
  out += "<p>" + esc(m.model) + ": estimated end-to-end latency " + latency_text(m.latency_s) +
         (m.complete ? "" : " (incomplete: some workloads have no measurement yet)") +
         " &mdash; &Sigma; weight &times; best latency over the model's workloads, at each "
         "workload's best template (the task scheduler's estimate).";
  if (m.untuned_latency_s) {
    out +=
        " Untuned (each workload's default config, what <code>kiln compile</code> without "
        "records runs): <span id=\"untuned-latency\">" +
        latency_text(*m.untuned_latency_s) + "</span>";
    if (m.complete && m.latency_s > 0) {
      out += ", so tuning has made the kernels <span id=\"model-speedup\">" +
             fmt("%.2f", *m.untuned_latency_s / m.latency_s) + "&times;</span> faster";
    }
    out += ".";
  }
  out += "</p>" + next_step(m, db_path);
  // Only estimates over every workload are drawn: one that leaves workloads out would rise as
  // they get measured, which is not the model getting slower.
  XYChart latency{
      "latency_vs_time", "Estimated end-to-end latency", "wall time (s)", "latency (ms)", {}};
  Series complete{"estimate", SeriesStyle::kStepLine, palette_color(0), Marker::kCircle, false, {}};
  double first_complete = -1, last = 0;
  for (const LatencyPoint& p : m.latency) {
    last = std::max(last, p.elapsed_s);
    if (!p.complete) continue;
    if (first_complete < 0) first_complete = p.elapsed_s;
    complete.points.push_back({p.elapsed_s, p.latency_s * 1e3});
  }
  if (!complete.points.empty()) latency.series.push_back(complete);
  if (m.untuned_latency_s) {
    Series baseline{"untuned (default configs)",
                    SeriesStyle::kLine,
                    palette_color(3),
                    Marker::kCircle,
                    true,
                    {}};
    baseline.points = {{0, *m.untuned_latency_s * 1e3}, {last, *m.untuned_latency_s * 1e3}};
    latency.series.push_back(baseline);
  }
  if (first_complete > 0) {
    out += "<p class=\"note\">The estimate is drawn from " + seconds_text(first_complete) +
           " s on, when every workload had a measurement.</p>";
  }
  out += "<div class=\"charts\">" + render_xy_chart(latency);

  BarChart share{"task_share",
                 "Share of the estimated latency",
                 "share (%)",
                 {},
                 {"share"},
                 {palette_color(0)},
                 {{}},
                 false,
                 0};
  BarChart trials{"trials_per_task",
                  "Trials per task",
                  "trials",
                  {},
                  {"trials"},
                  {palette_color(2)},
                  {{}},
                  false,
                  0};
  std::string rows;
  for (const ModelTaskShare& t : m.tasks) {
    share.categories.push_back(t.label);
    share.values[0].push_back(100 * t.share);
    trials.categories.push_back(t.label);
    trials.values[0].push_back(static_cast<double>(t.trials));
    const bool both = std::isfinite(t.best_s) && std::isfinite(t.default_s) && t.best_s > 0;
    rows += "<tr>" + td(t.label, true) + td(fmt("%g", t.weight)) + td(std::to_string(t.trials)) +
            td(latency_text(t.best_s)) + td(latency_text(t.default_s)) + "<td class=\"speedup\">" +
            (both ? fmt("%.2f", t.default_s / t.best_s) + "&times;" : "-") + "</td>" +
            td(fmt("%.1f %%", 100 * t.share)) + "</tr>";
  }
  out += render_bar_chart(share) + render_bar_chart(trials) + "</div>";
  out +=
      "<table id=\"model-tasks\"><tr><th class=\"l\">task</th><th>weight</th><th>trials</th>"
      "<th>best (one occurrence)</th><th>default config</th><th>speedup over default</th>"
      "<th>share</th></tr>" +
      rows + "</table>";
  return out;
}

std::string runs_section(const ReportData& d) {
  std::string out = "<h2>Runs: where the time went</h2>";
  out +=
      "<p class=\"note\">A run is one execution of <code>kiln tune</code> or of a daemon job "
      "(its identity: host/pid/random). Build = waiting for the builders; run = checking "
      "and timing kernels, less the cooldowns when the runner can tell them apart (a farm's "
      "runner cools down on its own machine: there its cooldown stays in run, marked "
      "&ldquo;?&rdquo;); store = committing records; tuner = the rest (search, model fits, "
      "bookkeeping). Rows are updated after every committed batch, so a killed run shows "
      "what it spent.</p>";
  if (d.runs.empty()) {
    out +=
        "<p class=\"empty\">No run times recorded for this scope (records written before "
        "schema version 6, imported logs, or no run yet).</p>";
  } else {
    // One row per run, summed over its tasks, in order of start.
    struct Sum {
      store::RunTimes total;  // its first task's identity and start
      int64_t tasks = 0;
    };
    std::vector<std::string> order;
    std::map<std::string, Sum> sums;
    for (const store::RunTimes& r : d.runs) {
      auto [it, fresh] = sums.try_emplace(r.run, Sum{r, 1});
      if (fresh) {
        order.push_back(r.run);
      } else {
        it->second.total.add(r);
        ++it->second.tasks;
      }
    }
    BarChart split{
        "time_split",
        "Where the time went, per run",
        "seconds",
        {},
        {"build", "run", "cooldown", "store", "tuner"},
        {palette_color(0), palette_color(1), palette_color(7), palette_color(2), palette_color(3)},
        std::vector<std::vector<double>>(5),
        true,
        0};
    std::string rows;
    for (const std::string& run : order) {
      const store::RunTimes& s = sums[run].total;
      const bool cooldown_known = s.cooldown_s.has_value();
      double cooldown = s.cooldown_s.value_or(0);
      double tuner = std::max(0.0, s.tuner_s());
      std::time_t started = static_cast<std::time_t>(s.started);
      char when[32];
      std::strftime(when, sizeof when, "%m-%d %H:%M", std::gmtime(&started));
      split.categories.push_back("#" + std::to_string(split.categories.size() + 1) + " " + when +
                                 " " + s.source);
      split.values[0].push_back(s.build_s);
      split.values[1].push_back(s.run_s - cooldown);
      split.values[2].push_back(cooldown);
      split.values[3].push_back(s.store_s);
      split.values[4].push_back(tuner);
      rows += "<tr>" + td("#" + std::to_string(split.categories.size()) + " " + run, true) +
              td(s.source, true) + td(when) + td(std::to_string(sums[run].tasks)) +
              td(std::to_string(s.trials)) + td(std::to_string(s.errors)) +
              td(seconds_text(s.wall_s)) + td(seconds_text(s.build_s)) +
              td(seconds_text(s.run_s - cooldown)) +
              td(cooldown_known ? seconds_text(cooldown) : "?") + td(seconds_text(s.store_s)) +
              td(seconds_text(tuner)) + "</tr>";
    }
    out += render_bar_chart(split);
    out +=
        "<table><tr><th class=\"l\">run</th><th class=\"l\">source</th><th>started "
        "(UTC)</th><th>tasks</th><th>trials</th><th>errors</th><th>wall s</th><th>build "
        "s</th><th>run s</th><th>cooldown s</th><th>store s</th><th>tuner s</th></tr>" +
        rows + "</table>";
  }
  out += "<h3>Errors by kind</h3>";
  if (d.errors.empty()) {
    out += "<p class=\"note\" id=\"no-errors\">No failed trial.</p>";
  } else {
    out +=
        "<table id=\"errors\"><tr><th class=\"l\">kind</th><th>error_no</th><th>count</th>"
        "<th class=\"l\">example message</th></tr>";
    for (const ErrorKind& e : d.errors) {
      std::string example = e.example.size() > 600 ? e.example.substr(0, 600) + "..." : e.example;
      out += "<tr>" + td(kind_name(e.error_no), true) + td(std::to_string(e.error_no)) +
             td(std::to_string(e.count)) + "<td class=\"l\"><pre>" + esc(example) +
             "</pre></td></tr>";
    }
    out += "</table>";
  }
  return out;
}

std::string bench_section(const std::vector<BenchData>& bench) {
  std::string out = "<h2>Benchmarks: kiln against its peers</h2>";
  out += "<p class=\"note\">Ratio = peer's time / kiln's time (&gt; 1: kiln is faster).</p>";
  for (const BenchData& b : bench) {
    std::vector<std::string> peers;
    for (const BenchResultRow& r : b.results.rows) {
      for (const auto& [name, ms] : r.peer_ms) {
        if (std::find(peers.begin(), peers.end(), name) == peers.end()) peers.push_back(name);
      }
    }
    out += "<h3>" + esc(b.results.benchmark) + " (" + esc(b.file) + ")</h3>";
    BarChart ratios{"bench_ratio",
                    b.results.benchmark + ": peer time / kiln time",
                    "ratio",
                    {},
                    peers,
                    {},
                    std::vector<std::vector<double>>(peers.size()),
                    false,
                    1};
    for (size_t p = 0; p < peers.size(); ++p) ratios.series_colors.push_back(palette_color(p));
    std::string head = "<tr><th class=\"l\">what</th><th>kiln ms</th>";
    for (const std::string& p : peers) head += "<th>" + esc(p) + " ms</th><th>ratio</th>";
    std::string rows;
    for (const BenchResultRow& r : b.results.rows) {
      ratios.categories.push_back(r.label);
      rows += "<tr>" + td(r.label, true) + td(r.kiln_ms ? fmt("%.4f", *r.kiln_ms) : "-");
      for (size_t p = 0; p < peers.size(); ++p) {
        auto it = r.peer_ms.find(peers[p]);
        std::optional<double> ms = it == r.peer_ms.end() ? std::nullopt : it->second;
        double ratio = ms && r.kiln_ms ? *ms / *r.kiln_ms : NAN;
        ratios.values[p].push_back(ratio);
        rows +=
            td(ms ? fmt("%.4f", *ms) : "-") + td(std::isfinite(ratio) ? fmt("%.2f", ratio) : "-");
      }
      rows += "</tr>";
    }
    out += render_bar_chart(ratios);
    out += "<table>" + head + "</tr>" + rows + "</table>";
  }
  return out;
}

std::string task_section(const TaskData& t, size_t index) {
  std::string out = "<section class=\"task\" id=\"task-" + std::to_string(index + 1) + "\">";
  out += "<h3>" + esc(key_label(t.task_name, t.workload)) + "</h3>";
  std::string note = "target " + t.target;
  if (t.weight > 0) note += ", weight " + fmt("%g", t.weight);
  for (const SourceTrials& s : t.sources) {
    note += "; " + s.source + ": " + std::to_string(s.trials.size()) + " trials, " +
            std::to_string(s.errors) + " failed, best " + fmt("%.2f", s.best_gflops) + " GFLOPS";
  }
  out += "<p class=\"note\">" + esc(note) + "</p>";
  if (t.sources.empty()) {
    out += "<p class=\"empty\">No record of this task yet.</p></section>";
    return out;
  }
  XYChart by_trial{"best_vs_trials", "Best GFLOPS so far, per trial", "trial", "GFLOPS", {}};
  XYChart by_time{
      "best_vs_time", "Best GFLOPS so far, over wall time", "wall time (s)", "GFLOPS", {}};
  for (size_t i = 0; i < t.sources.size(); ++i) {
    const SourceTrials& s = t.sources[i];
    Series trial_line{
        "best: " + s.source, SeriesStyle::kStepLine, palette_color(i), Marker::kCircle, i > 0, {}};
    Series time_line = trial_line;
    for (const Trial& tr : s.trials) {
      trial_line.points.push_back({static_cast<double>(tr.number), tr.best_gflops});
      time_line.points.push_back({tr.elapsed_s, tr.best_gflops});
    }
    by_trial.series.push_back(std::move(trial_line));
    by_time.series.push_back(std::move(time_line));
  }
  // Every trial of the primary source as a dot: successes at their GFLOPS, failures on the
  // axis, one series (marker and colour) per error kind.
  const SourceTrials& primary = t.sources.front();
  std::map<int, Series> dots;
  for (const Trial& tr : primary.trials) {
    auto [it, fresh] = dots.try_emplace(tr.error_no);
    Series& s = it->second;
    if (fresh) {
      s.style = SeriesStyle::kDots;
      if (tr.error_no == 0) {
        s.name = "trial (" + primary.source + ")";
        s.color = "#7fa7cf";
        s.marker = Marker::kCircle;
      } else {
        s.name = "failed: " + kind_name(tr.error_no);
        s.color = error_color(tr.error_no);
        s.marker = error_marker(tr.error_no);
      }
    }
    s.points.push_back({static_cast<double>(tr.number), tr.error_no == 0 ? tr.gflops : 0});
  }
  for (auto& [no, s] : dots) by_trial.series.push_back(std::move(s));
  out += "<div class=\"charts\">" + render_xy_chart(by_trial) + render_xy_chart(by_time) + "</div>";
  if (t.best) {
    out += "<p>Best: " + fmt("%.2f", t.best->flops() / 1e9) + " GFLOPS (" +
           fmt("%.4f", t.best->mean_cost() * 1e3) + " ms), config " +
           std::to_string(t.best->config_index) + ", from " + esc(t.best->source) + ":</p><pre>" +
           esc(t.best->entities.dump()) + "</pre>";
  } else {
    out += "<p class=\"note\">No successful trial yet.</p>";
  }
  return out + "</section>";
}

}  // namespace

// The live page's script: re-fetch this URL (with the page's credentials) and swap the content
// element in place; a failed fetch keeps what is shown and says so.
std::string live_refresh_script(double seconds) {
  return "<script>(function(){var ms=" + fmt("%.0f", std::max(1.0, seconds) * 1000) +
         ";function tick(){fetch(window.location.href,{credentials:'same-origin',cache:'no-store'})"
         ".then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.text();})"
         ".then(function(t){var d=new DOMParser().parseFromString(t,'text/html');"
         "var n=d.getElementById('kiln-content');var o=document.getElementById('kiln-content');"
         "if(n&&o){o.replaceWith(document.importNode(n,true));}"
         "var s=document.getElementById('kiln-refresh');if(s)s.textContent='updated '+"
         "new Date().toLocaleTimeString();})"
         ".catch(function(e){var s=document.getElementById('kiln-refresh');"
         "if(s)s.textContent='refresh failed: '+e.message;})"
         ".finally(function(){setTimeout(tick,ms);});}setTimeout(tick,ms);})();</script>";
}

std::string render_page(const ReportData& d, const RenderOptions& o) {
  const bool live = o.refresh_seconds > 0;
  std::string csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
  if (live) csp += "; script-src 'unsafe-inline'; connect-src 'self'";
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + esc(csp) + "\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + esc(o.title.empty() ? d.title : o.title) + "</title>";
  out += "<style>" + std::string(kStyle) + "</style></head><body>\n";
  if (live) {
    out += "<p class=\"note\">Live: refreshed every " + fmt("%g", o.refresh_seconds) +
           " s. <span id=\"kiln-refresh\"></span></p>";
  }
  out += "<div id=\"kiln-content\">";
  out += header(d, o);
  if (d.model) out += model_section(*d.model, d.db_path);
  out += runs_section(d);
  if (!d.bench.empty()) out += bench_section(d.bench);
  if (!d.tasks.empty()) out += "<h2>Tasks</h2>";
  for (size_t i = 0; i < d.tasks.size(); ++i) out += task_section(d.tasks[i], i);
  out += "</div>\n";
  if (live) out += live_refresh_script(o.refresh_seconds);
  out += "</body></html>\n";
  return out;
}

}  // namespace kiln::report
