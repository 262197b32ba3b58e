// A code generation target, written like TVM's: `llvm [-mtriple=T] [-mcpu=C] [-mattr=+a,-b]`.
// Missing parts default to the host (its triple, CPU name and CPU features).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln::builder {

struct Target {
  std::string triple;    // e.g. x86_64-pc-linux-gnu
  std::string cpu;       // e.g. znver5
  std::string features;  // LLVM feature string, e.g. +avx512f,+avx2,...

  // Parses a target string; errors name the unknown option.
  static Result<Target> parse(std::string_view text);
  // The machine kiln runs on.
  static Target host();

  // Canonical text, e.g. "llvm -mcpu=znver5" (features only when given explicitly).
  std::string to_string() const;
  // float32 lanes of the widest vector the features allow (16 AVX-512, 8 AVX2, 4 otherwise).
  int simd_lanes() const;
  bool has_feature(std::string_view name) const;  // name without '+', e.g. "avx512f"

  bool explicit_features = false;  // -mattr was given (otherwise features are the host's)
};

}  // namespace kiln::builder
