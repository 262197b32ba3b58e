// The dashboard's own page (`kiln serve --http`): `/`, the index of the daemon's jobs, one row
// each (id, name, state and reason, trials, priority, tuning time, est. latency) linking to the
// job's live view `/job/<id>` (report/report.h). Self-contained (inline CSS and script, nothing
// fetched from elsewhere). With refresh_seconds > 0 the page re-fetches itself every so many
// seconds and swaps its #content element in place (no full reload: scroll position and focus
// stay); each swap increments data-refreshes on <body>, and #updated shows the server time of
// the content.
#pragma once

#include <string>
#include <vector>

#include "daemon/job_manager.h"

namespace kiln::daemon {

std::string dashboard_index_html(const std::vector<JobView>& jobs, double refresh_seconds);

// The script that makes a page refresh its #content element in place (see above).
std::string refresh_in_place_script(double refresh_seconds);

}  // namespace kiln::daemon
