// AutoTVM's XGBoostCostModel for one task (reference/autotvm.md §5 and §6,
// python/tvm/autotvm/tuner/xgboost_cost_model.py): features of measured configs -> an XGBoost
// booster trained on normalized throughputs, with AutoTVM's early stopping on a-recall@plan_size,
// and optional transfer learning from a base model trained on other workloads of the same
// template (fit_log + load_basemodel).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "common/status.h"
#include "costmodel/cost_model.h"
#include "costmodel/features.h"
#include "costmodel/xgb_booster.h"

namespace kiln::costmodel {

class XgbCostModel : public TrainableModel {
 public:
  // Feature rows of config indices, one per index in order, an empty row for a config that
  // does not instantiate (FeatureExtractor::extract's contract).
  using FeatureSource =
      std::function<std::vector<std::vector<float>>(const std::vector<int64_t>& indices)>;

  // `seed` drives the row shuffle and XGBoost: the same seed and the same calls give the same
  // predictions. `nthread` is XGBoost's OpenMP thread count (see BoostOptions::nthread).
  XgbCostModel(FeatureSource features, LossType loss, uint64_t seed, int nthread = 1);
  // The usual case: the task's extractor. REQUIRES: `features` outlives the model.
  XgbCostModel(FeatureExtractor& features, LossType loss, uint64_t seed, int nthread = 1)
      : XgbCostModel(
            [&features](const std::vector<int64_t>& indices) { return features.extract(indices); },
            loss, seed, nthread) {}

  // Retrains from scratch on every measured config so far (AutoTVM's fit). flops[i] is the
  // measured FLOP/s of config indices[i]; 0 for a failed config, which stays in the training
  // set. NaN, infinite or negative flops count as failed. Labels are flops / max(max, 1e-8),
  // rows are shuffled, and boosting stops early on a-recall@plan_size (8000 rounds at most,
  // patience 20, evaluated every 2 rounds). With a base model (fit_transfer) whose discount is
  // still >= 0.05, the base model's discounted margins are the training base margin; below
  // that the base model is dropped for good.
  // REQUIRES: indices.size() == flops.size() > 0, plan_size > 0 (kInvalidArgument otherwise).
  // On error the previous model stays in place.
  Status fit(const std::vector<int64_t>& indices, const std::vector<double>& flops,
             int plan_size) override;

  // AutoTVM's fit_log: trains the base model from feature rows of OTHER workloads of the same
  // template (their own feature vectors, e.g. from a tuning log) and their flops (0 or
  // non-finite for failed records). Returns false without training when rows.size() <
  // min_rows. Labels are normalized by their max, rows shuffled, 400 rounds at most with
  // patience 100 on a-recall@(2 * plan_size). Until the first fit, predict() is the base model
  // alone; afterwards every fit and predict adds discount * base margin, with discount =
  // 2^-(n/64) for the n configs of the latest fit.
  // REQUIRES: rows.size() == flops.size(), plan_size > 0, no fit yet (kInvalidArgument
  // otherwise, because the current model would have been trained without the base margin).
  Result<bool> fit_transfer(const std::vector<std::vector<float>>& rows,
                            const std::vector<double>& flops, int plan_size, int min_rows = 500);

  // One score per index, higher meaning faster: all zeros before any fit or base model. Rows
  // are zero-padded or truncated to the width each booster was trained on. Cost per call: the
  // feature lookup, one padded copy and one in-place XGBoost prediction per booster (two while
  // a base model is in use); about 0.1 ms (knob) to 0.3-0.5 ms (itervar, curve) for 128
  // dense_pack configs on this 2-core machine. If XGBoost fails (it should not), the scores are
  // zeros. Not thread-safe.
  std::vector<float> predict(const std::vector<int64_t>& indices) override;

  // Whether fit() has succeeded at least once.
  bool trained() const { return model_.has_value(); }
  bool has_base_model() const { return base_.has_value(); }
  // Wall time spent in fit() and fit_transfer(), cumulative.
  double fit_seconds() const { return fit_seconds_; }
  // Rounds in the current model (0 before the first fit).
  int num_rounds() const { return model_ ? model_->num_rounds() : 0; }

  // The base-margin weight after a fit on n configs: 1 / 2^(n / 64).
  static double discount(int64_t num_samples);

 private:
  // discount * base margin for `rows`. REQUIRES base_.
  Result<std::vector<float>> base_margin(const std::vector<std::vector<float>>& rows,
                                         double discount) const;
  // A permutation of [0, n) drawn from rng_ (Fisher-Yates without std distributions, so the
  // order is the same with every standard library).
  std::vector<size_t> shuffle(size_t n);

  FeatureSource features_;
  LossType loss_;
  uint64_t seed_;
  int nthread_;
  std::mt19937_64 rng_;
  std::optional<Booster> model_;
  std::optional<Booster> base_;
  int64_t num_samples_ = 0;  // rows in the latest successful fit
  double fit_seconds_ = 0;
};

}  // namespace kiln::costmodel
