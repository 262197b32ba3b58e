// A small RAII layer over XGBoost's C API (1.7) with AutoTVM's training recipe
// (reference/autotvm.md §5, python/tvm/autotvm/tuner/xgboost_cost_model.py): fixed tree
// parameters, one boosting round at a time, and early stopping on a-recall@N measured on the
// training set itself. Every XGBoost handle is freed by a destructor and every XGBoost error
// becomes a Status carrying XGBGetLastError().
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::costmodel {

// A dense row-major float matrix, values.size() == rows * cols.
struct FeatureMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<float> values;
};

// Zero-pads every row to the widest one (cols < 0), or to exactly `cols` columns, truncating
// longer rows: XGBoost refuses to predict with more columns than it was trained on, and fewer
// would read as missing values rather than as zeros. An empty row (a config that failed to
// instantiate) becomes all zeros, as in AutoTVM. The result has at least one column, because
// XGBoost cannot train on zero columns.
FeatureMatrix pad_rows(const std::vector<std::vector<float>>& rows, int64_t cols = -1);

// AutoTVM's loss_type. kReg is "reg:squarederror" (AutoTVM's "reg:linear", renamed in XGBoost);
// kRank is "rank:pairwise" with no query groups, so all rows form one group.
// kRankBinary is TVM's "rank-binary": the rank objective, with the evaluation labels of early
// stopping binarized (>= 0.5 -> 1, else 0); the training labels stay continuous.
enum class LossType { kReg, kRank, kRankBinary };

// "reg", "rank" or "rank-binary"; kInvalidArgument naming them otherwise.
Result<LossType> parse_loss_type(std::string_view name);
const char* loss_type_name(LossType loss);

// How one booster is trained. The tree parameters are AutoTVM's and fixed: max_depth=3,
// gamma=1e-4, min_child_weight=1, subsample=1, eta=0.3, lambda=1, alpha=0; tree_method=hist
// (AutoTVM's XGBoost 1.x used exact; see xgb_booster.cc for why hist).
struct BoostOptions {
  LossType loss = LossType::kRank;
  // Upper bound on boosting rounds; early stopping normally ends training long before.
  int num_boost_round = 8000;
  // Stop once this many rounds passed since the best a-recall (AutoTVM's stopping_rounds).
  int early_stopping_rounds = 20;
  // N of the early-stopping metric a-recall@N on the training set; AutoTVM uses plan_size.
  int recall_top_n = 64;
  // Evaluate the metric only on rounds i with i % eval_every == 0 (AutoTVM's skip_every=2).
  int eval_every = 2;
  // XGBoost's OpenMP threads. 1 by default: on a small shared machine libgomp's spin-waiting
  // makes training several times slower under load (deps.md §4.11) and disturbs measurements.
  int nthread = 1;
  uint64_t seed = 0;
};

// A trained XGBoost model. Move-only. Not thread-safe: XGBoost keeps per-booster prediction
// buffers, so concurrent calls on one Booster (even predict) need external synchronization.
// Distinct Boosters may be used from distinct threads.
class Booster {
 public:
  // Trains on x (one row per sample) with AutoTVM's early stopping: one round at a time; after
  // round i with i % eval_every == 0 computes a-recall@recall_top_n of the current training-set
  // predictions; keeps the round with the best (strictly improving) score; stops when
  // early_stopping_rounds rounds passed since it, or after num_boost_round rounds. The returned
  // model holds only the trees of rounds 0..best (AutoTVM itself keeps the ~20 rounds past the
  // best too).
  // `base_margin` (nullable) is the per-row starting margin that replaces XGBoost's base_score;
  // predictions of this model are then only meaningful with a base margin of the same kind.
  // REQUIRES: labels.size() == x.rows > 0, finite labels, x.cols > 0, base_margin->size() == x.rows
  // when given, num_boost_round, eval_every, recall_top_n > 0 (kInvalidArgument otherwise).
  static Result<Booster> train(const FeatureMatrix& x, const std::vector<float>& labels,
                               const std::vector<float>* base_margin, const BoostOptions& options);

  Booster(Booster&&) noexcept;
  Booster& operator=(Booster&&) noexcept;
  ~Booster();

  // One score per row of x: the objective's prediction, or with output_margin the raw margin
  // (the same thing for both losses, whose links are the identity). Row i's margin starts from
  // base_margin[i] when given, else from XGBoost's base_score (0.5). REQUIRES: x.cols ==
  // num_features() (pad with pad_rows), base_margin->size() == x.rows when given (kInvalidArgument
  // otherwise).
  Result<std::vector<float>> predict(const FeatureMatrix& x, const std::vector<float>* base_margin,
                                     bool output_margin) const;

  // Width of the training matrix.
  int64_t num_features() const { return num_features_; }
  // Boosting rounds in the final model (best round + 1).
  int num_rounds() const { return num_rounds_; }
  // Rounds actually boosted before early stopping (>= num_rounds()).
  int rounds_trained() const { return rounds_trained_; }
  // The best a-recall on the training set seen during training.
  double best_score() const { return best_score_; }

 private:
  struct Handle;
  explicit Booster(std::unique_ptr<Handle> handle);

  std::unique_ptr<Handle> handle_;
  int64_t num_features_ = 0;
  int num_rounds_ = 0;
  int rounds_trained_ = 0;
  double best_score_ = 0;
};

}  // namespace kiln::costmodel
