// A workload: an operator name and its integer parameters, written `op:key=value,...`
// (e.g. `dense:M=1024,N=1024,K=1024`). Templates give the keys meaning (ops/template.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln::ops {

struct Workload {
  std::string op;
  std::map<std::string, int64_t> params;

  // Parses `op:key=value,...`. Errors name the offending part of the text.
  static Result<Workload> parse(std::string_view text);

  // Canonical text: `op:` then key=value in key order. Equal strings mean the same workload.
  std::string to_string() const;

  int64_t at(const std::string& key) const { return params.at(key); }
};

}  // namespace kiln::ops
