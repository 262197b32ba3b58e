// Static memory planning for a model's intermediates: given each buffer's size and the steps
// during which it is live, place all of them in one arena so that two buffers live at the same
// time never share a byte, reusing the bytes of buffers whose last reader has run.
//
// The plan is greedy by decreasing size (ties: earlier first use): each buffer goes into the
// smallest gap between the already placed buffers it overlaps in time that can hold it (best
// fit), else after the highest of them. Every offset and the arena size are multiples of
// kArenaAlignment, so every buffer is as aligned as the arena.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln {

inline constexpr int64_t kArenaAlignment = 64;

struct LiveBuffer {
  int64_t bytes = 0;   // > 0
  int first_step = 0;  // the step that first uses it
  int last_step = 0;   // the last step that uses it (>= first_step); both inclusive
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // byte offset of each buffer in the arena, in input order
  int64_t arena_bytes = 0;       // the arena size the plan needs
  int64_t unplanned_bytes = 0;   // the sum of the (aligned) sizes: one buffer each, no reuse
};

MemoryPlan plan_memory(const std::vector<LiveBuffer>& buffers);

}  // namespace kiln
