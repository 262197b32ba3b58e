// The dashboard's own page (`kiln serve --http`): `/`, the index of the daemon's jobs, one row
// each (id, name, state and reason, trials, priority, tuning time, budget and progress towards
// the part of it reached first, est. latency) linking to the job's live view `/job/<id>`
// (report/report.h). Self-contained (inline CSS and script, nothing fetched from elsewhere). With
// refresh_seconds > 0 it refreshes <div id="kiln-content"> in place as kiln report's live page does
// (report::live_refresh_script).
#pragma once

#include <string>
#include <vector>

#include "daemon/job_manager.h"

namespace kiln::dashboard {

std::string dashboard_index_html(const std::vector<daemon::JobView>& jobs, double refresh_seconds);

}  // namespace kiln::dashboard
