// kiln report: one self-contained HTML page (inline SVG charts, inline CSS, nothing fetched) that
// shows what a tuning store holds: per task, per model and per run (report_data.h gathers it,
// report_html.h lays it out). `kiln report` writes it to a file; the daemon's dashboard serves it
// live for a job (refresh_seconds > 0).
//
// A live page: everything that changes is inside <div id="kiln-content">; an inline script
// re-fetches the page's own URL every refresh_seconds (credentials: same-origin, no cache) and
// swaps that element in place; the page's CSP then also allows its inline script and
// connect-src 'self'. A server that requires a bearer header must also accept what a browser
// sends by itself on a same-origin fetch (a cookie, HTTP auth) for the refresh to pass.
//
// kiln_report links kiln_daemon (a job's spec and plan name its tasks), so code that serves
// these pages belongs in a library above both (or in cli/), not in kiln_daemon itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::report {

struct Scope {
  std::optional<int64_t> job;  // one daemon job: its records (store::job_source(id)) and, for a
                               // model job, its model
  std::string model_path;      // a model's tasks and weights (empty: none)
  // neither: every task in the store
};

struct RenderOptions {
  std::string title;                     // empty: derived from the scope
  std::vector<std::string> bench_files;  // bench JSON files (--bench)
  double refresh_seconds = 0;  // > 0: a live page (dashboard) that refreshes its content in place
                               // every so many seconds by re-fetching its own URL; 0: static report
};

// The report page of `scope` from the store at `db_path` (opened read-only, safe while a daemon
// writes it). Errors (a clear message naming the input): the store is missing or not a kiln
// store, the job is unknown, the model cannot be read, a bench file is unreadable or malformed.
// A store with no records is no error: the page says so.
Result<std::string> render_report_html(const std::string& db_path, const Scope& scope,
                                       const RenderOptions& options);

}  // namespace kiln::report
