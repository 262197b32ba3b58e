// AutoTVM's ranking metric for cost models (python/tvm/autotvm/tuner/metric.py, reference/
// autotvm.md §5): how many of the truly best points a model's top-N predictions recover. The
// model-based tuner stops XGBoost's boosting when this stops improving.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::costmodel {

// recall_curve[i] (for i < max_points) = #{j < i : true_rank(pred_order[j]) <= i} / (i + 1),
// where the points are visited in descending order of prediction and true_rank 0 is the
// highest label. As in
// metric.py the count excludes item i itself. Ties are broken as metric.py's numpy sorts do
// for small arrays (stably): equal predictions are visited in descending index order
// (argsort(preds)[::-1]), and equal labels are ranked in visit order (get_rank(labels[trials])).
// numpy's default sort is not stable on large arrays, so AutoTVM's own tie order there is
// unspecified.
// REQUIRES: predictions.size() == labels.size().
std::vector<double> recall_curve(const std::vector<float>& predictions,
                                 const std::vector<float>& labels,
                                 std::size_t max_points = SIZE_MAX);

// a-recall@N = sum(recall_curve[:N]) / N, exactly as AutoTVM's xgb_average_recalln_curve_score
// (so with fewer than N points the missing terms count as 0). Only the first N curve points
// are computed. REQUIRES: top_n > 0.
double average_recall(const std::vector<float>& predictions, const std::vector<float>& labels,
                      int top_n);

}  // namespace kiln::costmodel
