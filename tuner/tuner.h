// Search strategies (AutoTVM's Tuner, reference/autotvm.md §6): propose the next configs of a
// space to measure, learn from the results. All randomness comes from the seed given at
// construction, so a run can be replayed.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "ops/config_space.h"

namespace kiln::tuner {

class Tuner {
 public:
  // REQUIRES: `space` outlives the tuner.
  explicit Tuner(const ConfigSpace& space) : space_(space) {}
  virtual ~Tuner() = default;

  // Up to n valid config indices never proposed or measured before (fewer when the space runs
  // out). Each returned index counts as visited.
  virtual std::vector<int64_t> next_batch(int n) = 0;

  // Measured results: flops = throughput in FLOP/s, 0 for a failed config. Also used to replay
  // the history of a resumed run.
  virtual void update(const std::vector<int64_t>& indices, const std::vector<double>& flops) {
    (void)indices;
    (void)flops;
  }

  // True when the next next_batch() returns the same configs whether or not the results of
  // the `pending` configs proposed last (not yet passed to update()) are known first, so the
  // tuning loop may ask for it early and build it while they are measured.
  virtual bool can_propose_ahead(int64_t pending) const {
    (void)pending;
    return false;
  }

  // Marks a config as already measured (resuming from a record store).
  void mark_visited(int64_t index) { visited_.insert(index); }
  // Whether next_batch can still propose something.
  virtual bool has_next() const { return static_cast<int64_t>(visited_.size()) < space_.size(); }
  int64_t visited() const { return static_cast<int64_t>(visited_.size()); }

 protected:
  const ConfigSpace& space_;
  std::unordered_set<int64_t> visited_;
};

// Uniformly random unvisited valid configs (AutoTVM's RandomTuner).
class RandomTuner : public Tuner {
 public:
  RandomTuner(const ConfigSpace& space, uint64_t seed) : Tuner(space), rng_(seed) {}
  std::vector<int64_t> next_batch(int n) override;
  bool can_propose_ahead(int64_t) const override { return true; }

 private:
  std::mt19937_64 rng_;
};

// Valid configs in index order (AutoTVM's GridSearchTuner).
class GridTuner : public Tuner {
 public:
  explicit GridTuner(const ConfigSpace& space) : Tuner(space) {}
  std::vector<int64_t> next_batch(int n) override;
  bool can_propose_ahead(int64_t) const override { return true; }

 private:
  int64_t cursor_ = 0;
};

}  // namespace kiln::tuner
