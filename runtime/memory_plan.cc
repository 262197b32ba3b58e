#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "common/check.h"

namespace kiln {
namespace {

int64_t AlignUp(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool OverlapInTime(const LiveBuffer& a, const LiveBuffer& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<LiveBuffer>& buffers) {
  const size_t n = buffers.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<int64_t> size(n);
  for (size_t i = 0; i < n; ++i) {
    KILN_CHECK(buffers[i].bytes > 0 && buffers[i].first_step <= buffers[i].last_step)
        << "buffer " << i << ": " << buffers[i].bytes << " bytes, steps " << buffers[i].first_step
        << ".." << buffers[i].last_step;
    size[i] = AlignUp(buffers[i].bytes);
    plan.unplanned_bytes += size[i];
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (size[a] != size[b]) return size[a] > size[b];
    return buffers[a].first_step < buffers[b].first_step;
  });

  std::vector<size_t> placed;
  for (size_t i : order) {
    // The placed buffers live at the same time as i, by offset: i must fit between them.
    std::vector<size_t> conflicts;
    for (size_t j : placed) {
      if (OverlapInTime(buffers[i], buffers[j])) conflicts.push_back(j);
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    int64_t best = -1, best_gap = 0;
    int64_t cursor = 0;  // the lowest free byte above the conflicts seen so far
    for (size_t j : conflicts) {
      const int64_t gap = plan.offsets[j] - cursor;
      if (gap >= size[i] && (best < 0 || gap < best_gap)) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, plan.offsets[j] + size[j]);
    }
    plan.offsets[i] = best >= 0 ? best : cursor;
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + size[i]);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace kiln
