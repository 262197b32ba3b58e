// A Target built as plain data, for tests that must not depend on the host: parse_target fills
// in the host's features where the CPU is the host's. Features, when given, are explicit; a
// triple other than x86-64 is too.
#pragma once

#include <string>
#include <utility>

#include "exchange/target.h"

namespace kiln::testing {

inline Target fixed_target(std::string triple, std::string cpu, std::string features = "") {
  Target t;
  t.triple = std::move(triple);
  t.cpu = std::move(cpu);
  t.features = std::move(features);
  t.explicit_features = !t.features.empty();
  t.explicit_triple = !t.triple.starts_with("x86_64");
  return t;
}

}  // namespace kiln::testing
