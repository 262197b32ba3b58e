#include "costmodel/xgb_cost_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>

#include "common/stopwatch.h"

namespace kiln::costmodel {
namespace {

// AutoTVM's fit and fit_log budgets.
constexpr int kNumBoostRound = 8000;
constexpr int kEarlyStoppingRounds = 20;
constexpr int kBaseNumBoostRound = 400;
constexpr int kBaseEarlyStoppingRounds = 100;
constexpr int kEvalEvery = 2;
// load_basemodel's cut-off: the base model is dropped once its weight falls below this.
constexpr double kMinDiscount = 0.05;

// flops / max(max flops, 1e-8), with non-finite or negative flops counted as failed (0), so a
// corrupt measurement can neither poison the maximum nor reach XGBoost as NaN.
std::vector<float> normalized_labels(const std::vector<double>& flops) {
  std::vector<double> clean(flops.size());
  double max_flops = 0;
  for (size_t i = 0; i < flops.size(); ++i) {
    clean[i] = std::isfinite(flops[i]) && flops[i] > 0 ? flops[i] : 0.0;
    max_flops = std::max(max_flops, clean[i]);
  }
  const double scale = std::max(max_flops, 1e-8);
  std::vector<float> labels(flops.size());
  for (size_t i = 0; i < flops.size(); ++i) labels[i] = static_cast<float>(clean[i] / scale);
  return labels;
}

template <typename T>
std::vector<T> permute(const std::vector<T>& v, const std::vector<size_t>& perm) {
  std::vector<T> out;
  out.reserve(perm.size());
  for (size_t p : perm) out.push_back(v[p]);
  return out;
}

}  // namespace

XgbCostModel::XgbCostModel(FeatureSource features, LossType loss, uint64_t seed, int nthread)
    : features_(std::move(features)), loss_(loss), seed_(seed), nthread_(nthread), rng_(seed) {}

double XgbCostModel::discount(int64_t num_samples) {
  return 1.0 / std::exp2(static_cast<double>(num_samples) / 64.0);
}

std::vector<size_t> XgbCostModel::shuffle(size_t n) {
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  for (size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[rng_() % i]);
  return perm;
}

Result<std::vector<float>> XgbCostModel::base_margin(const std::vector<std::vector<float>>& rows,
                                                     double discount) const {
  KILN_ASSIGN_OR_RETURN(std::vector<float> margin,
                        base_->predict(pad_rows(rows, base_->num_features()), nullptr,
                                       /*output_margin=*/true));
  for (float& m : margin) m = static_cast<float>(discount * m);
  return margin;
}

Status XgbCostModel::fit(const std::vector<int64_t>& indices, const std::vector<double>& flops,
                         int plan_size) {
  if (indices.empty() || indices.size() != flops.size() || plan_size <= 0) {
    return InvalidArgument("XgbCostModel::fit needs as many flops as indices (got " +
                           std::to_string(indices.size()) + " and " + std::to_string(flops.size()) +
                           "), at least one, and plan_size > 0");
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<size_t> perm = shuffle(indices.size());
  const std::vector<std::vector<float>> rows = features_(permute(indices, perm));
  const std::vector<float> labels = permute(normalized_labels(flops), perm);

  // AutoTVM computes the base margin from the unshuffled rows and attaches it to the shuffled
  // matrix, misaligning the two; here it comes from the same shuffled rows.
  const int64_t n = static_cast<int64_t>(indices.size());
  const double d = discount(n);
  const bool use_base = base_.has_value() && d >= kMinDiscount;
  std::optional<std::vector<float>> margin;
  if (use_base) {
    KILN_ASSIGN_OR_RETURN(margin, base_margin(rows, d));
  }

  BoostOptions options;
  options.loss = loss_;
  options.num_boost_round = kNumBoostRound;
  options.early_stopping_rounds = kEarlyStoppingRounds;
  options.recall_top_n = plan_size;
  options.eval_every = kEvalEvery;
  options.nthread = nthread_;
  options.seed = seed_;
  Result<Booster> booster =
      Booster::train(pad_rows(rows), labels, margin ? &*margin : nullptr, options);
  fit_seconds_ += seconds_since(start);
  if (!booster.ok()) return booster.status();

  model_ = std::move(booster).value();
  num_samples_ = n;
  if (!use_base) base_.reset();
  return Status::Ok();
}

Result<bool> XgbCostModel::fit_transfer(const std::vector<std::vector<float>>& rows,
                                        const std::vector<double>& flops, int plan_size,
                                        int min_rows) {
  if (rows.size() != flops.size() || plan_size <= 0) {
    return InvalidArgument("XgbCostModel::fit_transfer needs as many flops as rows (got " +
                           std::to_string(rows.size()) + " and " + std::to_string(flops.size()) +
                           ") and plan_size > 0");
  }
  if (model_) {
    return InvalidArgument(
        "XgbCostModel::fit_transfer must come before the first fit: the current model was "
        "trained without a base margin");
  }
  if (static_cast<int64_t>(rows.size()) < min_rows) return false;

  const auto start = std::chrono::steady_clock::now();
  const std::vector<size_t> perm = shuffle(rows.size());
  const std::vector<float> labels = permute(normalized_labels(flops), perm);
  BoostOptions options;
  options.loss = loss_;
  options.num_boost_round = kBaseNumBoostRound;
  options.early_stopping_rounds = kBaseEarlyStoppingRounds;
  options.recall_top_n = 2 * plan_size;
  options.eval_every = kEvalEvery;
  options.nthread = nthread_;
  options.seed = seed_;
  Result<Booster> booster = Booster::train(pad_rows(permute(rows, perm)), labels, nullptr, options);
  fit_seconds_ += seconds_since(start);
  if (!booster.ok()) return booster.status();
  base_ = std::move(booster).value();
  return true;
}

std::vector<float> XgbCostModel::predict(const std::vector<int64_t>& indices) {
  if (!model_ && !base_) return std::vector<float>(indices.size(), 0.0f);
  const std::vector<std::vector<float>> rows = features_(indices);
  Result<std::vector<float>> scores = std::vector<float>();
  if (!model_) {
    // Before the first fit the base model ranks configs on its own (AutoTVM runs SA on it).
    scores = base_->predict(pad_rows(rows, base_->num_features()), nullptr, false);
  } else if (!base_) {
    scores = model_->predict(pad_rows(rows, model_->num_features()), nullptr, false);
  } else {
    Result<std::vector<float>> margin = base_margin(rows, discount(num_samples_));
    if (margin.ok()) {
      scores = model_->predict(pad_rows(rows, model_->num_features()), &*margin, false);
    } else {
      scores = margin.status();
    }
  }
  if (!scores.ok()) return std::vector<float>(indices.size(), 0.0f);
  return std::move(scores).value();
}

}  // namespace kiln::costmodel
