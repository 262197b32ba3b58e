// Every search strategy by name, as `kiln tune --tuner` offers them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "ops/template.h"
#include "tuner/tuner.h"

namespace kiln::tuner {

// The task a tuner searches. REQUIRES: everything referenced outlives the tuner.
struct TaskRef {
  const ops::Template& tmpl;
  const ops::Workload& workload;  // normalized
  const ConfigSpace& space;
  ops::TargetInfo target;
};

// Settings of the model-based tuners (ignored by the others).
struct TunerSettings {
  // Trials per plan: the model is refit after each. AutoTVM's default is 64; kiln's is 32,
  // because refitting twice as often found better configs sooner on every task of
  // bench/tuning_bench (dense 1024^3: 1.12 instead of 0.69 of random's 1000-trial best after
  // 100 trials) for a tuner overhead that stays a few percent of the wall time.
  int plan_size = 32;
  // The xgb tuners' options as TVM's XGBTuner takes them (`kiln tune --loss --feature
  // --diversity-filter-ratio`); unset keeps what the tuner's name says ("xgb-knob": knob, ...).
  std::optional<std::string> loss;     // "rank", "reg" or "rank-binary"
  std::optional<std::string> feature;  // "itervar", "knob" or "curve"
  std::optional<int> diversity_filter_ratio;
};

// "xgb" (itervar features, rank loss; the default), "xgb-knob", "xgb-curve" (the same with
// knob or curve features), "xgb-reg" (itervar, regression loss), "ga", "random", "grid".
// kInvalidArgument naming the known ones otherwise, for a plan_size below 1, for an unknown loss
// or feature, and for xgb settings given to a tuner that is not an xgb one.
Result<std::unique_ptr<Tuner>> make_tuner(const std::string& name, const TaskRef& task,
                                          uint64_t seed, const TunerSettings& settings = {});

// The names make_tuner knows, for help texts: "xgb | xgb-knob | ...".
std::string tuner_names();

}  // namespace kiln::tuner
