#include "cli/tune_live_line.h"

#include <cstdio>

namespace kiln::cli {

std::string clock_text(double seconds) {
  int64_t s = static_cast<int64_t>(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  }
  return buf;
}

std::string latency_text(double seconds, bool complete) {
  if (seconds <= 0) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%.3f ms", complete ? "" : ">= ", seconds * 1e3);
  return buf;
}

std::string tune_live_line(const tuner::ModelTuneStatus& st, std::optional<int64_t> total_trials,
                           const std::string& task, size_t width) {
  std::string line = "[" + std::to_string(st.trials);
  if (total_trials) line += "/" + std::to_string(*total_trials);
  line += " trials, " + clock_text(st.elapsed_s);
  if (st.eta_s >= 0) line += ", ETA " + clock_text(st.eta_s);
  line += "] est. latency " + latency_text(st.latency_s, st.latency_complete);
  if (!st.latency_complete) {
    line += " (" + std::to_string(st.measured_workloads) + " of " + std::to_string(st.workloads) +
            " workloads measured)";
  } else if (st.start_latency_complete) {
    line += " (start " + latency_text(st.start_latency_s, true) + ")";
  }
  line += " | ";
  const std::string ellipsis = "...";
  if (line.size() + task.size() <= width) return line + task;
  if (line.size() + ellipsis.size() < width) {
    return line + task.substr(0, width - line.size() - ellipsis.size()) + ellipsis;
  }
  return line.substr(0, width);
}

}  // namespace kiln::cli
