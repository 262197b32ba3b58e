#include "costmodel/metric.h"

#include <algorithm>
#include <numeric>

namespace kiln::costmodel {

std::vector<double> recall_curve(const std::vector<float>& predictions,
                                 const std::vector<float>& labels, size_t max_points) {
  const size_t n = predictions.size();
  // Visit order: metric.py's np.argsort(preds)[::-1], i.e. ascending then reversed, so points
  // with equal predictions are visited last index first.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return predictions[a] < predictions[b]; });
  std::reverse(order.begin(), order.end());
  // True rank of each visited point (0 = highest label): metric.py's get_rank(labels[trials]),
  // which ranks the labels in visit order, so equal labels are ranked in the order the model
  // put them. (Failed configs all have label 0; ranking their ties by input position instead
  // would make the score depend on the row shuffle.)
  std::vector<size_t> by_label(n);
  std::iota(by_label.begin(), by_label.end(), 0);
  std::stable_sort(by_label.begin(), by_label.end(),
                   [&](size_t a, size_t b) { return labels[order[a]] > labels[order[b]]; });
  std::vector<size_t> rank(n);  // rank[k]: true rank of the k-th visited point
  for (size_t r = 0; r < n; ++r) rank[by_label[r]] = r;

  const size_t points = std::min(n, max_points);
  std::vector<double> curve(points);
  for (size_t i = 0; i < points; ++i) {
    size_t hits = 0;
    for (size_t j = 0; j < i; ++j) hits += rank[j] <= i ? 1 : 0;
    curve[i] = static_cast<double>(hits) / static_cast<double>(i + 1);
  }
  return curve;
}

double average_recall(const std::vector<float>& predictions, const std::vector<float>& labels,
                      int top_n) {
  std::vector<double> curve = recall_curve(predictions, labels, static_cast<size_t>(top_n));
  return std::accumulate(curve.begin(), curve.end(), 0.0) / top_n;
}

}  // namespace kiln::costmodel
