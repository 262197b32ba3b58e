// A test-only operator whose configs fail on purpose, to check that a tuning run survives
// every kind of failure. Workload `fault:N=<n>`; knob `mode`:
//   ok          out = in (correct)
//   wrong       out = in + 1 (WRONG_ANSWER)
//   segfault    writes far outside its buffers (RUNTIME_DEVICE: the runner process crashes)
//   hang        loops for ~forever (RUN_TIMEOUT)
//   build_crash aborts the builder process while instantiating (COMPILE_HOST)
//   build_hang  never finishes instantiating (BUILD_TIMEOUT)
// and a knob `copy` (two equivalent variants) so that each mode appears twice.
#pragma once

#include "ops/template.h"

namespace kiln::testing {

// Registers the template (once) and returns it. Call before starting builder/runner workers.
const ops::Template& fault_template();

}  // namespace kiln::testing
