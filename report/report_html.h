// The report page: ReportData (report_data.h) laid out as one self-contained HTML document with
// inline CSS and inline SVG charts (svg_chart.h), nothing fetched: a Content-Security-Policy meta
// tag forbids every fetch (a live page may fetch only its own URL, to refresh).
//
// Sections, in order: header (scope, store, records), model (estimated latency over time, each
// task's share, trials per task), runs (where the time went, errors by kind with an example),
// benchmarks (kiln against its peers), then one section per task (best-so-far GFLOPS against
// trial number and against wall time per source, every trial as a dot, failures by error kind,
// the best config's entities). Everything the scope changes lives in <div id="kiln-content">;
// with refresh_seconds > 0 an inline script re-fetches the page's own URL that often and swaps
// that element in place.
//
// Chart kinds (data-chart): best_vs_trials, best_vs_time (per task), latency_vs_time, task_share,
// trials_per_task (model), time_split (runs), bench_ratio (benchmarks).
#pragma once

#include <string>

#include "report/report.h"
#include "report/report_data.h"

namespace kiln::report {

std::string render_page(const ReportData& data, const RenderOptions& options);

// The live page's script (also the dashboard's index): every `seconds` it re-fetches the page's
// own URL (with its credentials) and swaps <div id="kiln-content"> in place; <span
// id="kiln-refresh"> then says "updated TIME", or "refresh failed: WHY" (what is shown stays).
std::string live_refresh_script(double seconds);

}  // namespace kiln::report
