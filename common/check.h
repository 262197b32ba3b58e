// The one way kiln reports a bug in itself: an invariant that does not hold.
//
//   KILN_CHECK(cond) << "what was expected";   // always on, in every build type
//   KILN_UNREACHABLE("why this cannot happen");
//
// On failure it prints "kiln: internal error at FILE:LINE: check `cond` failed: <message>" to
// stderr and aborts (a core dump is what a bug deserves). Unlike assert() it is never compiled
// out: kiln's default build is RelWithDebInfo (NDEBUG), where an assert would let the program
// run on into undefined behaviour. Bad input is never a check failure: it is a Status
// (common/status.h) with a message for the user.
#pragma once

#include <sstream>
#include <string>

namespace kiln::internal {

// Collects the message of a failed check; its destructor reports and aborts.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    message_ << value;
    return *this;
  }

 private:
  const char* file_;
  int line_;
  const char* condition_;
  std::ostringstream message_;
};

// Lets `KILN_CHECK(c) << ...` be one statement whose stream part only runs on failure.
struct Voidify {
  void operator&(const CheckFailure&) {}
};

[[noreturn]] void unreachable(const char* file, int line, const std::string& message);

}  // namespace kiln::internal

#define KILN_CHECK(condition)                 \
  (condition) ? (void)0                       \
              : ::kiln::internal::Voidify() & \
                    ::kiln::internal::CheckFailure(__FILE__, __LINE__, #condition)

#define KILN_UNREACHABLE(message) ::kiln::internal::unreachable(__FILE__, __LINE__, (message))
