#include "tuner/measure_options.h"

#include <nlohmann/json.hpp>

#include "store/record.h"

namespace kiln::tuner {

namespace {

// Slack on top of the worst case of a batch: reference data, store waits, a loaded machine.
constexpr double kLeaseMarginS = 120;

}  // namespace

std::string measure_options_text(const runner::RunnerOptions& runner, double build_timeout_s) {
  const TimeOptions& time = runner.measure.time;
  nlohmann::json options = {
      {"build_timeout_s", build_timeout_s},
      {"cache_flush", time.enable_cpu_cache_flush},
      {"input_seed", runner.measure.input_seed},
      {"min_repeat_ms", time.min_repeat_ms},
      {"number", time.number},
      {"repeat", time.repeat},
      {"run_timeout_s", runner.timeout_s},
      {"threads", runner.resolved_threads()},
      {"tolerance", runner.measure.tolerance},
  };
  // Every value is a finite number or a boolean (the CLI validates the timeouts), so this
  // cannot fail; a non-finite value would make the options unknown rather than wrong.
  Result<std::string> text = store::canonical_measure_options(options);
  return text.ok() ? *text : std::string();
}

void use_model_timing(TimeOptions& time) {
  time.number = 1;
  time.repeat = 10;
  time.min_repeat_ms = 0;
  time.enable_cpu_cache_flush = true;
}

double lease_seconds(const runner::RunnerOptions& runner, double build_timeout_s, int batch_size) {
  double per_config = build_timeout_s + runner.timeout_s + runner.cooldown_interval_s;
  return std::max(batch_size, 1) * per_config + kLeaseMarginS;
}

}  // namespace kiln::tuner
