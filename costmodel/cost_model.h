// What a search strategy needs from a cost model: a score per config of one task, higher meaning
// faster. Scores only rank configs against each other (a rank model's scores are not
// throughputs), so a caller compares them and never reads them as FLOP/s.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace kiln::costmodel {

class CostModel {
 public:
  virtual ~CostModel() = default;

  // One score per config index of the task's space, in order. A config whose features cannot be
  // extracted (it does not instantiate) gets the score of an all-zero feature row.
  virtual std::vector<float> predict(const std::vector<int64_t>& indices) = 0;
};

// A cost model that learns from measurements (what the model-based tuner refits after each
// plan; XgbCostModel implements it).
class TrainableModel : public CostModel {
 public:
  // Refits on every measurement so far: flops[i] is the throughput of config indices[i], 0 for
  // a failure. On error the previous model stays in place.
  virtual Status fit(const std::vector<int64_t>& indices, const std::vector<double>& flops,
                     int plan_size) = 0;
};

}  // namespace kiln::costmodel
