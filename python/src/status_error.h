// How the extension turns kiln's Status errors into Python exceptions: the bindings call
// value() / check(), which throw StatusError; a translator registered once raises the matching
// class of kiln.errors (kiln/errors.py) with kiln's one-line message. Nothing here lets a C++
// exception or a failed Result reach the interpreter as a crash.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "common/status.h"

namespace kiln::python {

struct StatusError {
  StatusCode code;
  std::string message;
};

inline void check(const Status& s) {
  if (!s.ok()) throw StatusError{s.code(), s.message()};
}

template <typename T>
T value(Result<T> r) {
  if (!r.ok()) throw StatusError{r.status().code(), r.status().message()};
  return std::move(r).value();
}

// Bad input raised from the bindings themselves (kiln.errors.InvalidInputError).
[[noreturn]] inline void invalid(std::string message) {
  throw StatusError{StatusCode::kInvalidArgument, std::move(message)};
}

// The name of the kiln.errors class raised for `code`.
const char* error_class(StatusCode code);

// The Python exception for `e`, for code that must hold an error rather than throw it.
pybind11::error_already_set as_python_error(const StatusError& e);

// Registers the translator (once, from the module's init).
void register_status_errors();

}  // namespace kiln::python
