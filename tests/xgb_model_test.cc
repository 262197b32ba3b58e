// The XGBoost cost model (costmodel/xgb_booster.h, xgb_cost_model.h) and AutoTVM's ranking
// metric (costmodel/metric.h). Synthetic features keep these tests independent of feature
// extraction; one test runs the model on a real template's knob features.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "costmodel/features.h"
#include "costmodel/metric.h"
#include "costmodel/xgb_booster.h"
#include "costmodel/xgb_cost_model.h"
#include "ops/registry.h"
#include "tuner/space_walk.h"

namespace kiln::costmodel {
namespace {

// --- Metric -------------------------------------------------------------------------------

TEST(MetricTest, HandComputedExample) {
  // Visit order by prediction: points 0, 1, 2 with labels 1, 3, 2, whose true ranks are 2, 0, 1.
  // curve[0] = 0/1 (nothing before it), curve[1] = #{rank 2 <= 1}/2 = 0,
  // curve[2] = #{ranks 2, 0 <= 2}/3 = 2/3.
  const std::vector<float> pred = {3, 2, 1};
  const std::vector<float> labels = {1, 3, 2};
  const std::vector<double> curve = recall_curve(pred, labels);
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_DOUBLE_EQ(curve[0], 0.0);
  EXPECT_DOUBLE_EQ(curve[1], 0.0);
  EXPECT_DOUBLE_EQ(curve[2], 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(average_recall(pred, labels, 3), 2.0 / 9.0);
  EXPECT_DOUBLE_EQ(average_recall(pred, labels, 2), 0.0);
  // Fewer points than N: the missing curve terms count as 0.
  EXPECT_DOUBLE_EQ(average_recall(pred, labels, 5), (2.0 / 3.0) / 5.0);
  EXPECT_EQ(recall_curve(pred, labels, 2).size(), 2u);
}

TEST(MetricTest, PerfectOrderGivesIOverIPlusOne) {
  const std::vector<float> labels = {0.1f, 0.9f, 0.5f, 0.7f, 0.3f};
  const std::vector<double> curve = recall_curve(labels, labels);
  for (size_t i = 0; i < curve.size(); ++i) {
    EXPECT_DOUBLE_EQ(curve[i], static_cast<double>(i) / (i + 1)) << i;
  }
}

TEST(MetricTest, TiedLabelsAreRankedInVisitOrder) {
  // metric.py ranks labels[trials], so equal labels never count against the model: any order
  // of all-equal labels is a perfect ranking.
  const std::vector<float> labels(6, 0.0f);
  const std::vector<float> pred = {0.5f, 0.1f, 0.9f, 0.3f, 0.7f, 0.2f};
  const std::vector<double> curve = recall_curve(pred, labels);
  for (size_t i = 0; i < curve.size(); ++i) {
    EXPECT_DOUBLE_EQ(curve[i], static_cast<double>(i) / (i + 1)) << i;
  }
}

TEST(MetricTest, TiedPredictionsVisitLastIndexFirst) {
  // argsort(preds)[::-1]: with all predictions equal the visit order is 2, 1, 0, i.e. labels
  // 3, 2, 1 here, a perfect ranking.
  const std::vector<float> pred = {0, 0, 0};
  const std::vector<float> labels = {1, 2, 3};
  EXPECT_DOUBLE_EQ(average_recall(pred, labels, 3), (0.0 + 0.5 + 2.0 / 3.0) / 3.0);
}

// --- Synthetic data -----------------------------------------------------------------------

// Knob-like features: small powers of two, `cols` of them, only the first five matter.
std::vector<float> synthetic_row(uint64_t index, int cols) {
  std::mt19937_64 rng(index * 7919 + 17);
  std::vector<float> row(static_cast<size_t>(cols));
  for (float& v : row) v = static_cast<float>(1 << (rng() % 7));
  return row;
}

// A throughput with a clear structure (a best value per knob and an interaction), >= 0.
double synthetic_flops(const std::vector<float>& f) {
  const double a = std::log2(f[0]), b = std::log2(f[1]), c = std::log2(f[2]);
  const double d = std::log2(f[3]) + std::log2(f[4]);
  return std::max(0.0, 2 * a - std::abs(b - 3) + (c > 3 ? 1.5 : 0.0) - 0.5 * d + 4) * 1e9;
}

struct Dataset {
  FeatureMatrix x;
  std::vector<float> labels;
};

Dataset synthetic_dataset(uint64_t first_index, int rows, int cols) {
  std::vector<std::vector<float>> feature_rows;
  std::vector<float> labels;
  for (int r = 0; r < rows; ++r) {
    feature_rows.push_back(synthetic_row(first_index + r, cols));
    labels.push_back(static_cast<float>(synthetic_flops(feature_rows.back()) / 1.3e10));
  }
  return {pad_rows(feature_rows), labels};
}

// Spearman rank correlation (no tie correction; enough for a sanity threshold).
double rank_correlation(const std::vector<float>& a, const std::vector<float>& b) {
  auto ranks = [](const std::vector<float>& v) {
    std::vector<size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return v[i] < v[j]; });
    std::vector<double> r(v.size());
    for (size_t k = 0; k < order.size(); ++k) r[order[k]] = static_cast<double>(k);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double d2 = 0;
  for (size_t i = 0; i < ra.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d2 / (n * (n * n - 1));
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// --- Booster ------------------------------------------------------------------------------

TEST(XgbBoosterTest, PadRowsPadsAndTruncates) {
  const std::vector<std::vector<float>> rows = {{1, 2}, {}, {3, 4, 5}};
  FeatureMatrix m = pad_rows(rows);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 0, 0, 0, 0, 3, 4, 5}));
  m = pad_rows(rows, 2);
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 0, 0, 3, 4}));
  m = pad_rows(rows, 4);
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 0, 0, 0, 0, 0, 0, 3, 4, 5, 0}));
  // XGBoost needs a column even when every config failed.
  m = pad_rows({{}, {}});
  EXPECT_EQ(m.cols, 1);
  EXPECT_EQ(m.values, (std::vector<float>{0, 0}));
}

TEST(XgbBoosterTest, ParsesLossType) {
  EXPECT_EQ(*parse_loss_type("reg"), LossType::kReg);
  EXPECT_EQ(*parse_loss_type("rank"), LossType::kRank);
  EXPECT_EQ(*parse_loss_type("rank-binary"), LossType::kRankBinary);
  Result<LossType> bad = parse_loss_type("hinge");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("rank-binary"), std::string::npos);  // lists the known
  EXPECT_STREQ(loss_type_name(LossType::kRank), "rank");
  EXPECT_STREQ(loss_type_name(LossType::kRankBinary), "rank-binary");
}

class XgbBoosterLossTest : public testing::TestWithParam<LossType> {};

TEST_P(XgbBoosterLossTest, LearnsSyntheticFunctionAndStopsEarly) {
  const Dataset train = synthetic_dataset(0, 300, 40);
  const Dataset test = synthetic_dataset(100000, 1000, 40);
  BoostOptions options;
  options.loss = GetParam();
  options.recall_top_n = 64;
  Result<Booster> booster = Booster::train(train.x, train.labels, nullptr, options);
  ASSERT_TRUE(booster.ok()) << booster.status().message();
  EXPECT_EQ(booster->num_features(), 40);

  // AutoTVM's early stopping: the best round is even (evaluated every 2 rounds) and training
  // ends exactly 20 rounds after it, long before the 8000-round cap.
  EXPECT_LT(booster->rounds_trained(), 1000);
  EXPECT_EQ(booster->rounds_trained() - booster->num_rounds(), 20);
  EXPECT_EQ((booster->num_rounds() - 1) % 2, 0);

  Result<std::vector<float>> pred = booster->predict(test.x, nullptr, false);
  ASSERT_TRUE(pred.ok()) << pred.status().message();
  ASSERT_EQ(pred->size(), 1000u);
  EXPECT_GT(rank_correlation(*pred, test.labels), 0.7);
  // A random order recovers about i/1000 of the top i+1: a-recall@64 around 0.03.
  EXPECT_GT(average_recall(*pred, test.labels, 64), 0.3);
}

INSTANTIATE_TEST_SUITE_P(Losses, XgbBoosterLossTest,
                         testing::Values(LossType::kRank, LossType::kReg, LossType::kRankBinary),
                         [](const testing::TestParamInfo<LossType>& info) {
                           std::string name = loss_type_name(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(XgbBoosterTest, SameSeedGivesSamePredictions) {
  const Dataset train = synthetic_dataset(0, 200, 30);
  const Dataset test = synthetic_dataset(5000, 100, 30);
  BoostOptions options;
  options.seed = 42;
  Result<Booster> a = Booster::train(train.x, train.labels, nullptr, options);
  Result<Booster> b = Booster::train(train.x, train.labels, nullptr, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->num_rounds(), b->num_rounds());
  EXPECT_EQ(*a->predict(test.x, nullptr, false), *b->predict(test.x, nullptr, false));
}

TEST(XgbBoosterTest, AllZeroLabelsTrainQuicklyAndPredictFinite) {
  Dataset train = synthetic_dataset(0, 100, 20);
  std::fill(train.labels.begin(), train.labels.end(), 0.0f);
  for (LossType loss : {LossType::kRank, LossType::kReg}) {
    BoostOptions options;
    options.loss = loss;
    Result<Booster> booster = Booster::train(train.x, train.labels, nullptr, options);
    ASSERT_TRUE(booster.ok()) << booster.status().message();
    // Every order of equal labels is perfect, so round 0 is the best and nothing improves.
    EXPECT_EQ(booster->num_rounds(), 1);
    EXPECT_EQ(booster->rounds_trained(), 21);
    Result<std::vector<float>> pred = booster->predict(train.x, nullptr, false);
    ASSERT_TRUE(pred.ok());
    EXPECT_TRUE(all_finite(*pred));
  }
}

TEST(XgbBoosterTest, FewerRowsThanTopN) {
  const Dataset train = synthetic_dataset(0, 10, 8);
  BoostOptions options;
  options.recall_top_n = 64;
  Result<Booster> booster = Booster::train(train.x, train.labels, nullptr, options);
  ASSERT_TRUE(booster.ok()) << booster.status().message();
  EXPECT_TRUE(all_finite(*booster->predict(train.x, nullptr, false)));
}

TEST(XgbBoosterTest, BaseMarginReplacesBaseScore) {
  const Dataset train = synthetic_dataset(0, 100, 10);
  std::vector<float> margin(100);
  for (size_t i = 0; i < margin.size(); ++i) margin[i] = 0.01f * static_cast<float>(i % 7);
  BoostOptions options;
  options.loss = LossType::kReg;
  Result<Booster> booster = Booster::train(train.x, train.labels, &margin, options);
  ASSERT_TRUE(booster.ok()) << booster.status().message();
  // Both links are the identity: prediction = margin = base margin + trees (base_score, 0.5,
  // applies only without a base margin).
  std::vector<float> zero(100, 0.0f);
  const std::vector<float> trees = *booster->predict(train.x, &zero, true);
  const std::vector<float> with = *booster->predict(train.x, &margin, false);
  const std::vector<float> without = *booster->predict(train.x, nullptr, false);
  for (size_t i = 0; i < margin.size(); ++i) {
    EXPECT_NEAR(with[i], trees[i] + margin[i], 1e-5) << i;
    EXPECT_NEAR(without[i], trees[i] + 0.5f, 1e-5) << i;
  }
}

TEST(XgbBoosterTest, RejectsBadShapes) {
  const Dataset train = synthetic_dataset(0, 50, 10);
  BoostOptions options;
  std::vector<float> short_labels(49);
  EXPECT_EQ(Booster::train(train.x, short_labels, nullptr, options).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Booster::train(FeatureMatrix{}, {}, nullptr, options).status().code(),
            StatusCode::kInvalidArgument);
  std::vector<float> nan_labels = train.labels;
  nan_labels[3] = std::nanf("");
  EXPECT_EQ(Booster::train(train.x, nan_labels, nullptr, options).status().code(),
            StatusCode::kInvalidArgument);
  Result<Booster> booster = Booster::train(train.x, train.labels, nullptr, options);
  ASSERT_TRUE(booster.ok());
  const FeatureMatrix wide = pad_rows({synthetic_row(1, 12)});
  Result<std::vector<float>> pred = booster->predict(wide, nullptr, false);
  ASSERT_FALSE(pred.ok());
  EXPECT_EQ(pred.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(booster->predict(pad_rows({}, 10), nullptr, false)->empty());
}

// --- XgbCostModel on synthetic features ----------------------------------------------------

// Config index -> synthetic features; indices >= kWideFrom get two extra trailing values,
// indices >= kNarrowFrom lose their last three, and kFailed does not instantiate.
constexpr int kCols = 24;
constexpr int64_t kWideFrom = 1'000'000;
constexpr int64_t kNarrowFrom = 2'000'000;
constexpr int64_t kFailed = -1;

std::vector<std::vector<float>> synthetic_features(const std::vector<int64_t>& indices) {
  std::vector<std::vector<float>> rows;
  for (int64_t index : indices) {
    if (index == kFailed) {
      rows.emplace_back();
    } else if (index >= kNarrowFrom) {
      std::vector<float> row = synthetic_row(static_cast<uint64_t>(index - kNarrowFrom), kCols);
      row.resize(kCols - 3);
      rows.push_back(row);
    } else if (index >= kWideFrom) {
      std::vector<float> row = synthetic_row(static_cast<uint64_t>(index - kWideFrom), kCols);
      row.push_back(99);
      row.push_back(-7);
      rows.push_back(row);
    } else {
      rows.push_back(synthetic_row(static_cast<uint64_t>(index), kCols));
    }
  }
  return rows;
}

std::vector<int64_t> index_range(int64_t begin, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), begin);
  return v;
}

std::vector<double> flops_of(const std::vector<int64_t>& indices) {
  std::vector<double> flops;
  for (const auto& row : synthetic_features(indices)) flops.push_back(synthetic_flops(row));
  return flops;
}

std::vector<float> as_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

TEST(XgbCostModelTest, UntrainedPredictsZeros) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  EXPECT_FALSE(model.trained());
  EXPECT_FALSE(model.has_base_model());
  EXPECT_EQ(model.predict({1, 2, 3}), (std::vector<float>{0, 0, 0}));
  EXPECT_TRUE(model.predict({}).empty());
}

TEST(XgbCostModelTest, FitRanksUnseenConfigs) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  const std::vector<int64_t> train = index_range(0, 256);
  ASSERT_TRUE(model.fit(train, flops_of(train), 64).ok());
  EXPECT_TRUE(model.trained());
  EXPECT_GT(model.fit_seconds(), 0.0);
  const std::vector<int64_t> test = index_range(10000, 1000);
  const std::vector<float> pred = model.predict(test);
  EXPECT_GT(rank_correlation(pred, as_float(flops_of(test))), 0.6);
  EXPECT_GT(average_recall(pred, as_float(flops_of(test)), 64), 0.2);
}

TEST(XgbCostModelTest, SameSeedSamePredictions) {
  const std::vector<int64_t> train = index_range(0, 128);
  const std::vector<int64_t> test = index_range(5000, 128);
  std::vector<std::vector<float>> preds;
  for (int rep = 0; rep < 2; ++rep) {
    XgbCostModel model(synthetic_features, LossType::kRank, 7);
    ASSERT_TRUE(model.fit(train, flops_of(train), 64).ok());
    preds.push_back(model.predict(test));
  }
  EXPECT_EQ(preds[0], preds[1]);
}

TEST(XgbCostModelTest, NonFiniteAndFailedFlopsCountAsFailures) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  std::vector<int64_t> train = index_range(0, 100);
  std::vector<double> flops = flops_of(train);
  flops[3] = std::nan("");
  flops[5] = INFINITY;
  flops[7] = -INFINITY;
  flops[9] = -1;
  flops[11] = 0;
  train[13] = kFailed;
  flops[13] = 0;
  ASSERT_TRUE(model.fit(train, flops, 64).ok());
  EXPECT_TRUE(all_finite(model.predict(index_range(5000, 50))));

  // Nothing succeeded at all: labels are all zero; the fit still ends and predicts finite.
  XgbCostModel failed(synthetic_features, LossType::kReg, 1);
  ASSERT_TRUE(failed.fit(train, std::vector<double>(train.size(), std::nan("")), 64).ok());
  EXPECT_EQ(failed.num_rounds(), 1);
  EXPECT_TRUE(all_finite(failed.predict(index_range(5000, 50))));
}

TEST(XgbCostModelTest, FewerRowsThanPlanSize) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  const std::vector<int64_t> train = index_range(0, 12);
  ASSERT_TRUE(model.fit(train, flops_of(train), 64).ok());
  EXPECT_TRUE(all_finite(model.predict(index_range(100, 10))));
}

TEST(XgbCostModelTest, RejectsBadArguments) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  EXPECT_EQ(model.fit({}, {}, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.fit({1, 2}, {1.0}, 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(model.fit({1, 2}, {1.0, 2.0}, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(model.trained());
}

TEST(XgbCostModelTest, NarrowerAndWiderRowsArePaddedOrTruncated) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  const std::vector<int64_t> train = index_range(0, 128);
  ASSERT_TRUE(model.fit(train, flops_of(train), 64).ok());
  const std::vector<int64_t> test = index_range(300, 64);
  const std::vector<float> base = model.predict(test);

  // Wider rows: the extra trailing values are cut off, so scores are unchanged.
  std::vector<int64_t> wide = test;
  for (int64_t& i : wide) i += kWideFrom;
  EXPECT_EQ(model.predict(wide), base);

  // Narrower rows: zero-padded to the trained width; scores are those of the zero-padded rows.
  std::vector<int64_t> narrow = test;
  for (int64_t& i : narrow) i += kNarrowFrom;
  const std::vector<float> narrow_pred = model.predict(narrow);
  ASSERT_EQ(narrow_pred.size(), test.size());
  EXPECT_TRUE(all_finite(narrow_pred));

  // Mixed batch: each row is treated the same as in its own batch.
  const std::vector<float> mixed = model.predict({wide[0], narrow[1], test[2], kFailed});
  EXPECT_EQ(mixed[0], base[0]);
  EXPECT_EQ(mixed[1], narrow_pred[1]);
  EXPECT_EQ(mixed[2], base[2]);
  EXPECT_TRUE(std::isfinite(mixed[3]));
}

// --- Transfer learning --------------------------------------------------------------------

// "Other workloads": the same kind of function on other configs (indices 500000+).
void other_workload(int n, std::vector<std::vector<float>>* rows, std::vector<double>* flops) {
  const std::vector<int64_t> indices = index_range(500000, n);
  *rows = synthetic_features(indices);
  *flops = flops_of(indices);
}

TEST(XgbCostModelTest, TransferNeedsMinRows) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  std::vector<std::vector<float>> rows;
  std::vector<double> flops;
  other_workload(499, &rows, &flops);
  Result<bool> fitted = model.fit_transfer(rows, flops, 64);
  ASSERT_TRUE(fitted.ok()) << fitted.status().message();
  EXPECT_FALSE(*fitted);
  EXPECT_FALSE(model.has_base_model());
  EXPECT_EQ(model.predict({1, 2}), (std::vector<float>{0, 0}));
  EXPECT_EQ(model.fit_transfer(rows, {1.0}, 64).status().code(), StatusCode::kInvalidArgument);
}

TEST(XgbCostModelTest, BaseModelGuidesUntilDiscountDropsIt) {
  XgbCostModel model(synthetic_features, LossType::kRank, 1);
  std::vector<std::vector<float>> rows;
  std::vector<double> flops;
  other_workload(600, &rows, &flops);
  Result<bool> fitted = model.fit_transfer(rows, flops, 64);
  ASSERT_TRUE(fitted.ok()) << fitted.status().message();
  ASSERT_TRUE(*fitted);
  EXPECT_TRUE(model.has_base_model());
  EXPECT_FALSE(model.trained());

  // Before any fit the base model alone ranks this task's configs.
  const std::vector<int64_t> test = index_range(20000, 500);
  const std::vector<float> truth = as_float(flops_of(test));
  const std::vector<float> before = model.predict(test);
  EXPECT_GT(rank_correlation(before, truth), 0.6);

  // After 64 samples the discount is 1/2: the base model stays and still shifts the scores.
  EXPECT_DOUBLE_EQ(XgbCostModel::discount(64), 0.5);
  const std::vector<int64_t> first = index_range(0, 64);
  ASSERT_TRUE(model.fit(first, flops_of(first), 64).ok());
  EXPECT_TRUE(model.has_base_model());
  EXPECT_TRUE(all_finite(model.predict(test)));
  EXPECT_EQ(model.fit_transfer(rows, flops, 64).status().code(), StatusCode::kInvalidArgument);

  // Compare with a model trained on the same 64 samples and no base model: they must differ.
  XgbCostModel plain(synthetic_features, LossType::kRank, 1);
  ASSERT_TRUE(plain.fit(first, flops_of(first), 64).ok());
  EXPECT_NE(model.predict(test), plain.predict(test));

  // 1/2^(277/64) < 0.05: the base model is dropped; the model then predicts on its own.
  EXPECT_GE(XgbCostModel::discount(276), 0.05);
  EXPECT_LT(XgbCostModel::discount(277), 0.05);
  const std::vector<int64_t> many = index_range(0, 277);
  ASSERT_TRUE(model.fit(many, flops_of(many), 64).ok());
  EXPECT_FALSE(model.has_base_model());
  EXPECT_GT(rank_correlation(model.predict(test), truth), 0.6);
}

// --- XgbCostModel on a real template's features ---------------------------------------------

TEST(XgbCostModelTest, FitsRealTemplateFeatures) {
  const ops::Template* tmpl = ops::find_template("dense_pack.x86");
  ASSERT_NE(tmpl, nullptr);
  Result<ops::Workload> workload = ops::Workload::parse("dense:M=256,N=256,K=256");
  ASSERT_TRUE(workload.ok());
  workload = tmpl->normalize(*workload);
  ASSERT_TRUE(workload.ok()) << workload.status().message();
  const ConfigSpace space = tmpl->space(*workload);
  std::mt19937_64 rng(5);
  const std::vector<int64_t> indices = tuner::sample_ints(space, 192, rng);
  ASSERT_EQ(indices.size(), 192u);
  const std::vector<int64_t> train(indices.begin(), indices.begin() + 128);
  const std::vector<int64_t> test(indices.begin() + 128, indices.end());

  for (FeatureType type : {FeatureType::kKnob, FeatureType::kItervar}) {
    SCOPED_TRACE(feature_type_name(type));
    FeatureExtractor features(*tmpl, *workload, space, ops::TargetInfo{}, type, 1);
    // A made-up throughput that depends on the first features (the tile sizes).
    auto fake_flops = [&](const std::vector<int64_t>& idx) {
      std::vector<double> flops;
      for (const auto& row : features.extract(idx)) {
        double v = 2;
        for (size_t c = 0; c < std::min<size_t>(row.size(), 6); ++c) {
          v += std::sin(row[c] * static_cast<float>(c + 1));
        }
        flops.push_back(std::max(0.0, v) * 1e9);
      }
      return flops;
    };
    XgbCostModel model(features, LossType::kRank, 1);
    ASSERT_TRUE(model.fit(train, fake_flops(train), 64).ok());
    const std::vector<float> pred = model.predict(test);
    ASSERT_EQ(pred.size(), test.size());
    EXPECT_TRUE(all_finite(pred));
    EXPECT_GT(rank_correlation(pred, as_float(fake_flops(test))), 0.3);
  }
}

}  // namespace
}  // namespace kiln::costmodel
