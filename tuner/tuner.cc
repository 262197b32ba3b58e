#include "tuner/tuner.h"

#include "tuner/space_walk.h"

namespace kiln::tuner {

std::vector<int64_t> RandomTuner::next_batch(int n) {
  std::vector<int64_t> out;
  while (static_cast<int>(out.size()) < n && has_next()) {
    int64_t index = random_index(space_, rng_, visited_);
    if (index < 0) break;
    visited_.insert(index);
    out.push_back(index);
  }
  return out;
}

std::vector<int64_t> GridTuner::next_batch(int n) {
  std::vector<int64_t> out;
  while (static_cast<int>(out.size()) < n && cursor_ < space_.range_length()) {
    int64_t index = cursor_++;
    if (!space_.is_index_valid(index) || visited_.count(index)) continue;
    visited_.insert(index);
    out.push_back(index);
  }
  return out;
}

}  // namespace kiln::tuner
