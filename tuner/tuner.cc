#include "tuner/tuner.h"

namespace kiln::tuner {

std::vector<int64_t> RandomTuner::next_batch(int n) {
  std::vector<int64_t> out;
  while (static_cast<int>(out.size()) < n && has_next()) {
    int64_t index = space_.random_index(rng_, visited_);
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

Result<std::unique_ptr<Tuner>> make_tuner(const std::string& name, const ConfigSpace& space,
                                          uint64_t seed) {
  if (name == "random") return std::unique_ptr<Tuner>(new RandomTuner(space, seed));
  if (name == "grid") return std::unique_ptr<Tuner>(new GridTuner(space));
  return InvalidArgument("unknown tuner '" + name + "' (known: random, grid)");
}

}  // namespace kiln::tuner
