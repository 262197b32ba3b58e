// Python behaviours that kiln reproduces bit for bit because TVM's files and indices depend on
// them: CPython's set iteration order for small positive ints (TVM's "verbose" split factors),
// repr() of floats (TVM log lines) and repr()/str() of the JSON-like values that appear in TVM's
// config strings (knob entities).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln {

// list(set(a) | set(b)) as CPython 3.7-3.12 iterates it (Objects/setobject.c, 64-bit, int hash =
// value), which is NOT sorted: with a = divisors of 112 and b = its powers of two the result is
// [32, 1, 2, 64, 4, 7, 8, 14, 16, 112, 56, 28]. REQUIRES every element >= 1.
std::vector<int64_t> py_set_union_order(const std::vector<int64_t>& a,
                                        const std::vector<int64_t>& b);

// Python's repr of a finite double, e.g. 0.0045656413, 1000000000.0, 2.1e-05, -0.0: the shortest
// digits that read back to x, in fixed notation for 1e-4 <= |x| < 1e16 (at least one decimal),
// else exponent notation with at least two exponent digits. REQUIRES: std::isfinite(x).
std::string py_float_repr(double x);

// repr() of the Python value that `value` decodes to (json.loads): None, True/False, integers,
// floats as py_float_repr, strings in single quotes, lists as [a, b]. Strings are not escaped
// (TVM's knob values and annotation names hold no quotes or backslashes). Objects print as JSON.
std::string py_repr(const nlohmann::json& value);
// str() of the same value: py_repr, except that a top-level string is not quoted.
std::string py_str(const nlohmann::json& value);

}  // namespace kiln
