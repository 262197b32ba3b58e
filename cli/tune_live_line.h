// The status line `kiln tune MODEL` prints while it runs (redrawn in place on a terminal, one
// line per task otherwise), and the time and latency texts it shares with the final summary.
//
// The line never exceeds `width` columns (100: wrap-free next to an 80-column terminal's prompt
// once the workload is abbreviated): trials (of the total budget), elapsed time, the ETA of the
// first budget to end, the estimated end-to-end latency, and the task being tuned. While some
// workload has no measurement the estimate is a lower bound over the measured ones only, so the
// line says ">=" and how many workloads it covers instead of comparing it with the start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tuner/model_tune.h"

namespace kiln::cli {

// "1h02m03s", "2m05s".
std::string clock_text(double seconds);
// "1.234 ms", ">= 1.234 ms" when not every workload is measured, "n/a" for nothing.
std::string latency_text(double seconds, bool complete);

// `task` names the task being tuned ("3/17 conv2d_NCHWc.x86 conv2d:C=64,..."); its end is cut
// (marked "...") where the line would be longer than `width`.
std::string tune_live_line(const tuner::ModelTuneStatus& status,
                           std::optional<int64_t> total_trials, const std::string& task,
                           size_t width = 100);

}  // namespace kiln::cli
