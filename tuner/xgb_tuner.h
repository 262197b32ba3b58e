// AutoTVM's XGBTuner (python/tvm/autotvm/tuner/xgboost_tuner.py): the model-based tuner with an
// XGBoost cost model on one feature type and loss, planned by simulated annealing, optionally
// warm-started from the records of other workloads of the same template (transfer learning,
// AutoTVM's load_history/fit_log).
#pragma once

#include <memory>
#include <vector>

#include "costmodel/features.h"
#include "costmodel/xgb_cost_model.h"
#include "ops/template.h"
#include "store/record.h"
#include "tuner/model_based_tuner.h"

namespace kiln::tuner {

namespace detail {
// Constructed before the ModelBasedTuner base that refers to them (base-from-member).
struct XgbParts {
  XgbParts(const ops::Template& tmpl, const ops::Workload& workload, const ConfigSpace& space,
           ops::TargetInfo target, costmodel::FeatureType features, costmodel::LossType loss,
           uint64_t seed);
  costmodel::FeatureExtractor extractor;
  costmodel::XgbCostModel xgb;
};
}  // namespace detail

// What transfer learning found and did.
struct TransferReport {
  int64_t records = 0;  // records of other workloads of the template considered
  int64_t usable = 0;   // of which turned into training rows
  bool used = false;    // a base model was trained (AutoTVM needs >= 500 rows)
  double seconds = 0;   // feature extraction + training
};

class XgbTuner : private detail::XgbParts, public ModelBasedTuner {
 public:
  // REQUIRES: tmpl, space outlive the tuner; workload is normalized.
  XgbTuner(const ops::Template& tmpl, const ops::Workload& workload, const ConfigSpace& space,
           ops::TargetInfo target, costmodel::FeatureType features, costmodel::LossType loss,
           uint64_t seed, ModelTunerOptions options = {});

  // Trains the base model from `records` (other workloads of this template: each record's
  // features come from its own workload and entities; failed records train as zero
  // throughput; records that do not parse for this template, and records of an older
  // measurement version (store::is_comparable), are skipped) and, when there are
  // enough, plans the first trials with it. Call before the first batch.
  Result<TransferReport> transfer_from(const std::vector<store::Record>& records,
                                       int min_rows = 500);

  const costmodel::XgbCostModel& model() const { return xgb; }

 private:
  const ops::Template& tmpl_;
  ops::TargetInfo target_;
  costmodel::FeatureType feature_type_;
};

}  // namespace kiln::tuner
