// JSON text exactly as Python's json.dumps(obj) writes it with its defaults, so that kiln's TVM
// log lines are byte-identical to TVM's: separators ", " and ": ", keys in the object's order,
// ensure_ascii (non-ASCII as \uXXXX, surrogate pairs above U+FFFF), and numbers as Python prints
// them: integers in decimal, floats as repr(float) (py_float_repr, common/python_compat.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/python_compat.h"  // py_float_repr, which writes the floats
#include "common/status.h"

namespace kiln::store {

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
