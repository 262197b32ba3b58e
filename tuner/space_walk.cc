#include "tuner/space_walk.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "common/check.h"
#include "common/random.h"

namespace kiln::tuner {

int64_t random_index(const ConfigSpace& space, std::mt19937_64& rng) {
  const int64_t range_length = space.range_length();
  if (range_length == 0) return -1;
  if (!space.has_filter()) return static_cast<int64_t>(uniform_below(rng, range_length));
  if (range_length <= ConfigSpace::kMaxFilterCacheRange) {
    const int64_t n = space.size();
    if (n == 0) return -1;
    return space.nth_valid_index(static_cast<int64_t>(uniform_below(rng, n)));
  }
  // Too large to cache: rejection sampling. Only after many misses is the (expensive) exact count
  // taken, to tell a sparse space from an empty one.
  for (int64_t tries = 0;; ++tries) {
    if (tries == 4096 && space.size() == 0) return -1;
    const int64_t i = static_cast<int64_t>(uniform_below(rng, range_length));
    if (space.is_index_valid(i)) return i;
  }
}

int64_t random_index(const ConfigSpace& space, std::mt19937_64& rng,
                     const std::unordered_set<int64_t>& exclude) {
  if (exclude.empty()) return random_index(space, rng);
  const int64_t range_length = space.range_length();
  auto remaining = [&] {
    int64_t excluded_valid = 0;
    for (int64_t e : exclude) excluded_valid += space.is_index_valid(e) ? 1 : 0;
    return space.size() - excluded_valid;
  };
  auto hit = [&](int64_t i) { return !exclude.contains(i) && space.is_index_valid(i); };
  if (range_length > ConfigSpace::kMaxFilterCacheRange) {
    // Too large to scan: rejection sampling; the exact (possibly expensive) count is taken only
    // after many misses, to tell a sparse remainder from an empty one.
    for (int64_t tries = 0;; ++tries) {
      if (tries == 4096 && remaining() <= 0) return -1;
      const int64_t i = static_cast<int64_t>(uniform_below(rng, range_length));
      if (hit(i)) return i;
    }
  }
  const int64_t left = remaining();
  if (left <= 0) return -1;
  if (left * 16 >= range_length) {  // dense: about 16 draws per hit at worst
    while (true) {
      const int64_t i = static_cast<int64_t>(uniform_below(rng, range_length));
      if (hit(i)) return i;
    }
  }
  // Sparse: pick the r-th remaining index by scanning, which bounds the cost by the range.
  int64_t r = static_cast<int64_t>(uniform_below(rng, left));
  for (int64_t i = 0; i < range_length; ++i) {
    if (hit(i) && r-- == 0) return i;
  }
  return -1;  // unreachable: `left` indices pass hit()
}

int64_t random_walk(const ConfigSpace& space, int64_t index, std::mt19937_64& rng) {
  const int64_t range_length = space.range_length();
  KILN_CHECK(index >= 0 && index < range_length)
      << "random_walk(" << index << ") outside [0, " << range_length << ")";
  // Would the walk below never end? Asked up front only where size() is cheap; above the cache
  // limit it is asked after kMaxSteps, since counting streams over the whole range.
  auto stuck = [&]() -> std::optional<int64_t> {
    const int64_t n = space.size();
    if (n == 0) return -1;
    if (n == 1 && space.is_index_valid(index)) return index;
    return std::nullopt;
  };
  if (!space.has_filter() || range_length <= ConfigSpace::kMaxFilterCacheRange) {
    if (auto r = stuck()) return *r;
  }
  const std::vector<int64_t> d = space.dims();
  std::vector<int64_t> knob = space.point2knob(index);
  int64_t point = index;
  constexpr int kMaxSteps = 1 << 20;
  for (int step = 0; point == index || !space.is_index_valid(point); ++step) {
    if (step == kMaxSteps) {
      if (auto r = stuck()) return *r;
      return random_index(space, rng, {index});
    }
    const size_t from = uniform_below(rng, d.size());
    knob[from] = static_cast<int64_t>(uniform_below(rng, d[from]));
    point = space.knob2point(knob);
  }
  return point;
}

std::vector<int64_t> sample_ints(const ConfigSpace& space, int64_t m, std::mt19937_64& rng) {
  const int64_t range_length = space.range_length();
  const int64_t n = space.size();
  m = std::min(m, n);
  std::vector<int64_t> out;
  if (m <= 0) return out;
  if (m * 2 > n && n <= ConfigSpace::kMaxFilterCacheRange) {
    // Most of the space is wanted: rejection would redraw often, so shuffle the valid indices.
    std::vector<int64_t> valid;
    valid.reserve(n);
    for (int64_t i = 0; i < range_length; ++i) {
      if (space.is_index_valid(i)) valid.push_back(i);
    }
    for (int64_t i = 0; i < m; ++i) {
      const int64_t j = i + static_cast<int64_t>(uniform_below(rng, n - i));
      std::swap(valid[i], valid[j]);
    }
    valid.resize(m);
    return valid;
  }
  std::unordered_set<int64_t> seen;
  out.reserve(m);
  while (static_cast<int64_t>(out.size()) < m) {
    const int64_t i = random_index(space, rng);
    if (seen.insert(i).second) out.push_back(i);
  }
  return out;
}

}  // namespace kiln::tuner
