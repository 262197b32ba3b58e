// Helpers of the lean-runner tests: the shared mlp model and its reference output, and the
// aarch64 kiln-runner under qemu-user (AARCH64_RUNNER_BINARY, QEMU_AARCH64: empty when this
// machine lacks the cross toolchain, the arm64 packages or qemu-user-static).
#pragma once

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/farm/farm_fixture.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln::arm {

inline std::string mlp_dir() { return std::string(KILN_SHARED_DIR) + "/models/mlp"; }

inline std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / sizeof(float));
  std::copy(bytes.data(), bytes.data() + out.size() * sizeof(float),
            reinterpret_cast<char*>(out.data()));
  return out;
}

// max |a - b| / max |b| (io.json's tolerance rule); infinity when the sizes differ.
inline double relative_max_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || b.empty()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

// The emulator, as a runner's --exec-prefix and a shell prefix. No `-L /usr/aarch64-linux-gnu`:
// the binary runs on the arm64 multiarch libc, since the cross toolchain's older libc there hangs
// in pthread_create under Debian 12's qemu 7.2 (README, "Device farm").
inline std::string qemu_prefix() { return std::string(QEMU_AARCH64); }

// Why the aarch64 tests cannot run here, or "" when they can.
inline std::string aarch64_missing() {
  if (std::string(AARCH64_RUNNER_BINARY).empty() || std::string(QEMU_AARCH64).empty()) {
    return "no aarch64 kiln-runner: this build found no aarch64-linux-gnu-g++, arm64 gRPC or "
           "qemu-aarch64-static (scripts/install-deps.sh test installs them)";
  }
  return "";
}

}  // namespace kiln::arm
