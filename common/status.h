// Errors as values. Library code returns Status or Result<T>; the CLI turns a failed one
// into a single line and a non-zero exit. A message names the input and the place at fault.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "common/check.h"

namespace kiln {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: a workload, a config index, a file's contents
  kInstantiation,    // a config that the template cannot realize (AutoTVM's InstantiationError)
  kCompile,          // LLVM or the linker failed
  kRuntime,          // loading or running an artifact failed
  kIo,               // a file or process operation failed
  kInternal,         // a bug in kiln
  kUnimplemented,    // valid input that kiln does not handle (yet): an operator variant, a feature
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(StatusCode code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status::Error(StatusCode::kInvalidArgument, std::move(m));
}
inline Status InstantiationError(std::string m) {
  return Status::Error(StatusCode::kInstantiation, std::move(m));
}
inline Status CompileError(std::string m) {
  return Status::Error(StatusCode::kCompile, std::move(m));
}
inline Status RuntimeError(std::string m) {
  return Status::Error(StatusCode::kRuntime, std::move(m));
}
inline Status UnimplementedError(std::string m) {
  return Status::Error(StatusCode::kUnimplemented, std::move(m));
}
inline Status IoError(std::string m) { return Status::Error(StatusCode::kIo, std::move(m)); }
inline Status InternalError(std::string m) {
  return Status::Error(StatusCode::kInternal, std::move(m));
}

// A value or the Status explaining why there is none. REQUIRES: the Status passed in is not ok.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    KILN_CHECK(!status_.ok()) << "a Result made from an ok Status has no value";
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok() (checked: using the value of an error is a bug, reported with the error).
  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->checked(); }
  T& operator*() & { return checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->checked(); }

 private:
  T& checked() {
    KILN_CHECK(value_.has_value()) << "the value of a failed Result: " << status_.message();
    return *value_;
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace kiln

// Returns early from the enclosing function when `expr` (a Status) is not ok.
#define KILN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::kiln::Status _kiln_status = (expr);        \
    if (!_kiln_status.ok()) return _kiln_status; \
  } while (0)

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)
// Binds `lhs` to the value of a Result expression, or returns its Status from the enclosing
// function.
#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(_kiln_result_, __LINE__), lhs, expr)
#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
