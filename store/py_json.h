// JSON text exactly as Python's json.dumps(obj) writes it with its defaults, so that kiln's TVM
// log lines are byte-identical to TVM's: separators ", " and ": ", keys in the object's order,
// ensure_ascii (non-ASCII as \uXXXX, surrogate pairs above U+FFFF), and numbers as Python prints
// them: integers in decimal, floats as repr(float) (shortest round-trip digits; fixed notation
// with at least one decimal for 1e-4 <= |x| < 1e16, else e.g. 1e-05, 1.5e+16).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln::store {

// Python's repr of a finite double, e.g. 0.0045656413, 1000000000.0, 2.1e-05, -0.0.
// REQUIRES: std::isfinite(x).
std::string py_float_repr(double x);

// json.dumps(value). Python would write NaN/Infinity, which are not JSON and which no reader
// (nlohmann included) accepts: they are an error here instead. A string that is not valid UTF-8
// is an error too.
Result<std::string> py_json_dumps(const nlohmann::ordered_json& value);
Result<std::string> py_json_dumps(const nlohmann::json& value);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool is_valid_utf8(std::string_view text);
// `text` with each ill-formed byte replaced by U+FFFD (for messages captured from compilers or
// crashing kernels, which may hold any bytes).
std::string to_valid_utf8(std::string_view text);

}  // namespace kiln::store
