// Float storage for kernels' buffers, allocated alike by the model executor and the tuner's
// runner, so that a kernel is timed in the tuner on memory like the memory it runs on in a model.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace kiln {

struct FreeFloats {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeFloats>;

// At least `bytes` bytes (at least one cache line), zero-filled, aligned to kArenaAlignment (64
// bytes, runtime/memory_plan.h: kernels use aligned vector loads on whole buffers). A buffer of 2
// MiB or more is aligned to 2 MiB and asks for transparent huge pages (madvise; honoured where the
// system allows it): a kernel streaming tens of megabytes of weights otherwise takes a TLB miss
// every 4 KiB. Dies with a message when the memory cannot be had.
AlignedFloats allocate_floats(int64_t bytes);

}  // namespace kiln
