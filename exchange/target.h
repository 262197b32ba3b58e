// A code generation target as plain data: what builder and runner exchange and what records
// name (`llvm [-mtriple=T] [-mcpu=C] [-mattr=+a,-b]`, written like TVM's). Nothing here calls
// LLVM, so a device-side runner, the tracker and the daemon can hold targets; parsing a target
// string against what LLVM supports and detecting the host live in builder/target.h.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

struct Target {
  std::string triple;    // e.g. x86_64-pc-linux-gnu
  std::string cpu;       // e.g. znver5
  std::string features;  // LLVM feature string, e.g. +avx512f,+avx2,...

  bool explicit_features = false;  // -mattr was given (otherwise features are the host's)
  // -mtriple named a triple other than the host's where the target was parsed. to_string()
  // writes the triple only then, so that "llvm" and "llvm -mtriple=<host>" name one target.
  bool explicit_triple = false;

  // Canonical text, e.g. "llvm -mcpu=znver5" (features and triple only when given explicitly).
  std::string to_string() const;
  // float32 lanes of the widest vector the features allow (16 AVX-512, 8 AVX2, 4 otherwise).
  int simd_lanes() const;
  bool has_feature(std::string_view name) const;  // name without '+', e.g. "avx512f"

  bool operator==(const Target&) const = default;
};

}  // namespace kiln
