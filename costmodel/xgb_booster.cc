#include "costmodel/xgb_booster.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "costmodel/metric.h"

namespace kiln::costmodel {
namespace {

// Turns an XGBoost return code into a Status with XGBoost's own message (thread-local, so it
// belongs to the call that just failed).
Status check(int rc, const char* what) {
  if (rc == 0) return Status::Ok();
  return InternalError(std::string("XGBoost ") + what + " failed: " + XGBGetLastError());
}

struct DMatrixDeleter {
  void operator()(void* handle) const { XGDMatrixFree(handle); }
};
using DMatrix = std::unique_ptr<void, DMatrixDeleter>;

// A DMatrix over x. Missing is NaN so that padding zeros are real zero values, as in AutoTVM
// (xgb.DMatrix's default missing is NaN too).
Result<DMatrix> make_dmatrix(const FeatureMatrix& x, const std::vector<float>* labels,
                             const std::vector<float>* base_margin, int nthread) {
  DMatrixHandle raw = nullptr;
  KILN_RETURN_IF_ERROR(
      check(XGDMatrixCreateFromMat_omp(x.values.data(), static_cast<bst_ulong>(x.rows),
                                       static_cast<bst_ulong>(x.cols),
                                       std::numeric_limits<float>::quiet_NaN(), &raw, nthread),
            "XGDMatrixCreateFromMat"));
  DMatrix m(raw);
  if (labels != nullptr) {
    KILN_RETURN_IF_ERROR(check(XGDMatrixSetFloatInfo(raw, "label", labels->data(), labels->size()),
                               "XGDMatrixSetFloatInfo(label)"));
  }
  if (base_margin != nullptr) {
    KILN_RETURN_IF_ERROR(
        check(XGDMatrixSetFloatInfo(raw, "base_margin", base_margin->data(), base_margin->size()),
              "XGDMatrixSetFloatInfo(base_margin)"));
  }
  return m;
}

Status check_shape(const FeatureMatrix& x) {
  if (x.rows < 0 || x.cols < 0 || static_cast<int64_t>(x.values.size()) != x.rows * x.cols) {
    return InvalidArgument("feature matrix of " + std::to_string(x.rows) + "x" +
                           std::to_string(x.cols) + " holds " + std::to_string(x.values.size()) +
                           " values");
  }
  return Status::Ok();
}

// Copies a prediction out of XGBoost's buffer, which the next call on the booster reuses.
Result<std::vector<float>> copy_predictions(const bst_ulong* shape, bst_ulong dim,
                                            const float* result, int64_t expected_rows) {
  bst_ulong n = 1;
  for (bst_ulong d = 0; d < dim; ++d) n *= shape[d];
  if (static_cast<int64_t>(n) != expected_rows) {
    return InternalError("XGBoost returned " + std::to_string(n) + " predictions for " +
                         std::to_string(expected_rows) + " rows");
  }
  return std::vector<float>(result, result + n);
}

// Predictions of `booster` on `dmat`: the objective's output of all trees so far. Used on the
// training matrix, which is in the booster's prediction cache, so this only reads the cache.
Result<std::vector<float>> predict_dmatrix(BoosterHandle booster, DMatrixHandle dmat,
                                           int64_t expected_rows) {
  const char* config =
      R"({"type":0,"training":false,"iteration_begin":0,"iteration_end":0,"strict_shape":false})";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  KILN_RETURN_IF_ERROR(
      check(XGBoosterPredictFromDMatrix(booster, dmat, config, &shape, &dim, &result),
            "XGBoosterPredictFromDMatrix"));
  return copy_predictions(shape, dim, result, expected_rows);
}

}  // namespace

FeatureMatrix pad_rows(const std::vector<std::vector<float>>& rows, int64_t cols) {
  FeatureMatrix m;
  m.rows = static_cast<int64_t>(rows.size());
  if (cols < 0) {
    cols = 0;
    for (const auto& row : rows) cols = std::max(cols, static_cast<int64_t>(row.size()));
  }
  m.cols = std::max<int64_t>(cols, 1);
  m.values.assign(static_cast<size_t>(m.rows * m.cols), 0.0f);
  for (int64_t r = 0; r < m.rows; ++r) {
    const auto& row = rows[static_cast<size_t>(r)];
    const size_t n = std::min(row.size(), static_cast<size_t>(m.cols));
    std::copy_n(row.begin(), n, m.values.begin() + r * m.cols);
  }
  return m;
}

Result<LossType> parse_loss_type(std::string_view name) {
  if (name == "reg") return LossType::kReg;
  if (name == "rank") return LossType::kRank;
  if (name == "rank-binary") return LossType::kRankBinary;
  return InvalidArgument("unknown loss '" + std::string(name) +
                         "' (known: rank, reg, rank-binary)");
}

const char* loss_type_name(LossType loss) {
  switch (loss) {
    case LossType::kReg:
      return "reg";
    case LossType::kRank:
      return "rank";
    case LossType::kRankBinary:
      return "rank-binary";
  }
  return "?";
}

struct Booster::Handle {
  BoosterHandle booster = nullptr;
  ~Handle() {
    if (booster != nullptr) XGBoosterFree(booster);
  }
};

Booster::Booster(std::unique_ptr<Handle> handle) : handle_(std::move(handle)) {}
Booster::Booster(Booster&&) noexcept = default;
Booster& Booster::operator=(Booster&&) noexcept = default;
Booster::~Booster() = default;

Result<Booster> Booster::train(const FeatureMatrix& x, const std::vector<float>& labels,
                               const std::vector<float>* base_margin, const BoostOptions& options) {
  KILN_RETURN_IF_ERROR(check_shape(x));
  if (x.rows == 0 || x.cols == 0) return InvalidArgument("cannot train on an empty matrix");
  if (static_cast<int64_t>(labels.size()) != x.rows) {
    return InvalidArgument(std::to_string(labels.size()) + " labels for " + std::to_string(x.rows) +
                           " rows");
  }
  if (base_margin != nullptr && static_cast<int64_t>(base_margin->size()) != x.rows) {
    return InvalidArgument(std::to_string(base_margin->size()) + " base margins for " +
                           std::to_string(x.rows) + " rows");
  }
  if (!std::all_of(labels.begin(), labels.end(), [](float v) { return std::isfinite(v); })) {
    return InvalidArgument("labels must be finite");
  }
  if (options.num_boost_round <= 0 || options.eval_every <= 0 || options.recall_top_n <= 0 ||
      options.early_stopping_rounds < 0) {
    return InvalidArgument("bad boosting options: rounds, eval_every and recall_top_n must be > 0");
  }
  const int nthread = std::max(options.nthread, 1);
  KILN_ASSIGN_OR_RETURN(DMatrix dtrain, make_dmatrix(x, &labels, base_margin, nthread));

  auto handle = std::make_unique<Handle>();
  DMatrixHandle cache[] = {dtrain.get()};
  KILN_RETURN_IF_ERROR(check(XGBoosterCreate(cache, 1, &handle->booster), "XGBoosterCreate"));
  const std::string nthread_text = std::to_string(nthread);
  // XGBoost's seed is an int64.
  const std::string seed_text = std::to_string(options.seed & INT64_MAX);
  const std::pair<const char*, const char*> params[] = {
      {"objective", options.loss == LossType::kReg ? "reg:squarederror" : "rank:pairwise"},
      {"max_depth", "3"},
      {"gamma", "0.0001"},
      {"min_child_weight", "1"},
      {"subsample", "1.0"},
      {"eta", "0.3"},
      {"lambda", "1.0"},
      {"alpha", "0"},
      {"verbosity", "0"},
      // AutoTVM ran with XGBoost 1.x's default, "exact" on one machine. "hist" finds the same
      // splits of the training rows whenever a column has at most max_bin=256 distinct values
      // (only the thresholds between two values differ), which holds for a task's features
      // (dense_pack.x86: at most 20 per column over 300 configs), and trained 2.5-3x faster
      // on 300 x 500 itervar/curve matrices; exact only won on columns of hundreds of distinct
      // values.
      {"tree_method", "hist"},
      {"nthread", nthread_text.c_str()},
      {"seed", seed_text.c_str()},
      // Reseeds XGBoost's thread-local RNG from (seed, round) every round, so the model does
      // not depend on what other boosters on this thread did before.
      {"seed_per_iteration", "true"},
  };
  for (const auto& [name, value] : params) {
    KILN_RETURN_IF_ERROR(check(XGBoosterSetParam(handle->booster, name, value),
                               (std::string("XGBoosterSetParam(") + name + ")").c_str()));
  }

  // AutoTVM's custom_callback: evaluate on rounds i % skip_every == 0 only, keep the strictly
  // best score, stop when i - best >= stopping_rounds (initial best: -inf at round 0).
  std::vector<float> eval_labels = labels;
  if (options.loss == LossType::kRankBinary) {
    for (float& y : eval_labels) y = y >= 0.5f ? 1.0f : 0.0f;
  }
  double best_score = -std::numeric_limits<double>::infinity();
  int best_round = 0;
  int round = 0;
  for (; round < options.num_boost_round; ++round) {
    KILN_RETURN_IF_ERROR(check(XGBoosterUpdateOneIter(handle->booster, round, dtrain.get()),
                               "XGBoosterUpdateOneIter"));
    if (round % options.eval_every != 0) continue;
    KILN_ASSIGN_OR_RETURN(std::vector<float> pred,
                          predict_dmatrix(handle->booster, dtrain.get(), x.rows));
    const double score = average_recall(pred, eval_labels, options.recall_top_n);
    if (score > best_score) {
      best_score = score;
      best_round = round;
    } else if (round - best_round >= options.early_stopping_rounds) {
      ++round;
      break;
    }
  }
  const int rounds_trained = round;
  if (best_round + 1 < rounds_trained) {
    // Keep only rounds [0, best]: a sliced booster predicts with the best model and no
    // iteration_end needs to travel with it.
    BoosterHandle sliced = nullptr;
    KILN_RETURN_IF_ERROR(
        check(XGBoosterSlice(handle->booster, 0, best_round + 1, 1, &sliced), "XGBoosterSlice"));
    auto sliced_handle = std::make_unique<Handle>();
    sliced_handle->booster = sliced;
    handle = std::move(sliced_handle);
  }

  Booster b(std::move(handle));
  b.num_features_ = x.cols;
  b.num_rounds_ = best_round + 1;
  b.rounds_trained_ = rounds_trained;
  b.best_score_ = best_score;
  return b;
}

Result<std::vector<float>> Booster::predict(const FeatureMatrix& x,
                                            const std::vector<float>* base_margin,
                                            bool output_margin) const {
  KILN_RETURN_IF_ERROR(check_shape(x));
  if (x.cols != num_features_) {
    return InvalidArgument("predicting with " + std::to_string(x.cols) +
                           " features on a model trained with " + std::to_string(num_features_));
  }
  if (base_margin != nullptr && static_cast<int64_t>(base_margin->size()) != x.rows) {
    return InvalidArgument(std::to_string(base_margin->size()) + " base margins for " +
                           std::to_string(x.rows) + " rows");
  }
  if (x.rows == 0) return std::vector<float>();

  // In-place prediction reads x where it lies; building a DMatrix per call (a CSR copy) made
  // a 128x300 batch 1.3-1.9x slower. A base margin travels in a proxy DMatrix holding only
  // meta info.
  DMatrix proxy;
  if (base_margin != nullptr) {
    DMatrixHandle raw = nullptr;
    KILN_RETURN_IF_ERROR(check(XGProxyDMatrixCreate(&raw), "XGProxyDMatrixCreate"));
    proxy.reset(raw);
    KILN_RETURN_IF_ERROR(
        check(XGDMatrixSetFloatInfo(raw, "base_margin", base_margin->data(), base_margin->size()),
              "XGDMatrixSetFloatInfo(base_margin)"));
  }
  // numpy's __array_interface__ for a C-contiguous float32 matrix.
  const char* typestr = std::endian::native == std::endian::little ? "<f4" : ">f4";
  const std::string values =
      "{\"data\":[" + std::to_string(reinterpret_cast<uintptr_t>(x.values.data())) +
      ",true],\"shape\":[" + std::to_string(x.rows) + "," + std::to_string(x.cols) +
      "],\"typestr\":\"" + typestr + "\",\"version\":3}";
  // missing = NaN so that zeros are real values, as in training; cache_id is required by 1.7.
  const char* config = output_margin ? R"({"type":1,"training":false,"iteration_begin":0,)"
                                       R"("iteration_end":0,"strict_shape":false,)"
                                       R"("missing":NaN,"cache_id":0})"
                                     : R"({"type":0,"training":false,"iteration_begin":0,)"
                                       R"("iteration_end":0,"strict_shape":false,)"
                                       R"("missing":NaN,"cache_id":0})";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  KILN_RETURN_IF_ERROR(check(XGBoosterPredictFromDense(handle_->booster, values.c_str(), config,
                                                       proxy.get(), &shape, &dim, &result),
                             "XGBoosterPredictFromDense"));
  return copy_predictions(shape, dim, result, x.rows);
}

}  // namespace kiln::costmodel
