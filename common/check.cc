#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition)
    : file_(file), line_(line), condition_(condition) {}

CheckFailure::~CheckFailure() {
  std::string message = message_.str();
  std::fprintf(stderr, "kiln: internal error at %s:%d: check `%s` failed%s%s\n", file_, line_,
               condition_, message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

void unreachable(const char* file, int line, const std::string& message) {
  CheckFailure(file, line, "unreachable code was reached") << message;
  std::abort();  // not reached: the failure's destructor aborts
}

}  // namespace kiln::internal
