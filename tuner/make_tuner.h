// Every search strategy by name, as `kiln tune --tuner` offers them.
#pragma once

#include <memory>
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

// "xgb" (itervar features, rank loss; the default), "xgb-knob", "xgb-curve" (the same with
// knob or curve features), "xgb-reg" (itervar, regression loss), "ga", "random", "grid".
// kInvalidArgument naming the known ones otherwise.
Result<std::unique_ptr<Tuner>> make_tuner(const std::string& name, const TaskRef& task,
                                          uint64_t seed);

// The names make_tuner knows, for help texts: "xgb | xgb-knob | ...".
std::string tuner_names();

}  // namespace kiln::tuner
