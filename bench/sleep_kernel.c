/* bench/farm_bench's kernel: a shared object with kiln's kernel ABI (runtime/kernel_abi.h) whose
 * one stage sleeps 100 ms and copies its input to its output, so that the farm's throughput and
 * overheads are measured against a kernel of known duration. Bench-only: built by CMake with the
 * C compiler, never by kiln's builder. */
#include <stdint.h>
#include <time.h>

#include "runtime/kernel_abi.h"

/* The element count of the bench template's tensors (farm_bench.cc kSleepElements). */
#define KILN_SLEEP_ELEMENTS 256

__attribute__((visibility("default"))) void kiln_sleep_stage(float* const* buffers,
                                                             const KilnRuntimeApi* api) {
  (void)api;
  struct timespec t = {0, 100 * 1000 * 1000};
  while (nanosleep(&t, &t) != 0) {
  }
  for (int64_t i = 0; i < KILN_SLEEP_ELEMENTS; ++i) buffers[1][i] = buffers[0][i];
}
