// Linked with every object of kiln_runner (tests/runner/CMakeLists.txt): that it links at all
// shows the runner needs no builder symbol; the test then checks it loads no LLVM.
#include <cstdio>

#include "runner/local_measure.h"

int main() {
  // A runner function, so that the program uses the library it is built to check.
  std::printf("%g\n", kiln::runner::relative_error({1.0f}, {1.0f}));
  return 0;
}
