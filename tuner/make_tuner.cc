#include "tuner/make_tuner.h"

#include "tuner/ga_tuner.h"
#include "tuner/xgb_tuner.h"

namespace kiln::tuner {

namespace {

struct XgbVariant {
  const char* name;
  costmodel::FeatureType features;
  costmodel::LossType loss;
};

constexpr XgbVariant kXgbVariants[] = {
    {"xgb", costmodel::FeatureType::kItervar, costmodel::LossType::kRank},
    {"xgb-knob", costmodel::FeatureType::kKnob, costmodel::LossType::kRank},
    {"xgb-curve", costmodel::FeatureType::kCurve, costmodel::LossType::kRank},
    {"xgb-reg", costmodel::FeatureType::kItervar, costmodel::LossType::kReg},
};

}  // namespace

std::string tuner_names() {
  std::string names;
  for (const XgbVariant& v : kXgbVariants) names += std::string(v.name) + " | ";
  return names + "ga | random | grid";
}

Result<std::unique_ptr<Tuner>> make_tuner(const std::string& name, const TaskRef& task,
                                          uint64_t seed, const TunerSettings& settings) {
  if (settings.plan_size < 1) return InvalidArgument("the plan size must be at least 1");
  for (const XgbVariant& v : kXgbVariants) {
    if (name == v.name) {
      ModelTunerOptions options;
      options.plan_size = settings.plan_size;
      costmodel::FeatureType features = v.features;
      costmodel::LossType loss = v.loss;
      if (settings.feature) {
        KILN_ASSIGN_OR_RETURN(features, costmodel::parse_feature_type(*settings.feature));
      }
      if (settings.loss) {
        KILN_ASSIGN_OR_RETURN(loss, costmodel::parse_loss_type(*settings.loss));
      }
      if (settings.diversity_filter_ratio) {
        if (*settings.diversity_filter_ratio < 1) {
          return InvalidArgument("the diversity filter ratio must be at least 1");
        }
        options.diversity_filter_ratio = settings.diversity_filter_ratio;
      }
      return std::unique_ptr<Tuner>(new XgbTuner(task.tmpl, task.workload, task.space, task.target,
                                                 features, loss, seed, options));
    }
  }
  if (settings.loss || settings.feature || settings.diversity_filter_ratio) {
    return InvalidArgument(
        "--loss, --feature and --diversity-filter-ratio are options of the xgb "
        "tuners, not of '" +
        name + "'");
  }
  if (name == "ga") return std::unique_ptr<Tuner>(new GaTuner(task.space, {}, seed));
  if (name == "random") return std::unique_ptr<Tuner>(new RandomTuner(task.space, seed));
  if (name == "grid") return std::unique_ptr<Tuner>(new GridTuner(task.space));
  return InvalidArgument("unknown tuner '" + name + "' (known: " + tuner_names() + ")");
}

}  // namespace kiln::tuner
