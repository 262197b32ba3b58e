#include "runtime/aligned_floats.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "common/check.h"
#include "runtime/memory_plan.h"

namespace kiln {

AlignedFloats allocate_floats(int64_t bytes) {
  constexpr int64_t kHugePage = int64_t{2} << 20;
  // An arena's offsets are multiples of kArenaAlignment: its buffers are as aligned as it is.
  const int64_t alignment = bytes >= kHugePage ? kHugePage : kArenaAlignment;
  const int64_t rounded =
      std::max<int64_t>(alignment, (bytes + alignment - 1) / alignment * alignment);
  void* p = std::aligned_alloc(static_cast<size_t>(alignment), static_cast<size_t>(rounded));
  KILN_CHECK(p != nullptr) << "out of memory allocating " << rounded << " bytes";
  // Advice only: where huge pages are off, the buffer keeps small pages.
  if (alignment == kHugePage) madvise(p, static_cast<size_t>(rounded), MADV_HUGEPAGE);
  std::memset(p, 0, static_cast<size_t>(rounded));
  return AlignedFloats(static_cast<float*>(p));
}

}  // namespace kiln
