#include "ops/workload.h"

#include <cctype>
#include <charconv>

namespace kiln::ops {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

}  // namespace

Result<Workload> Workload::parse(std::string_view text) {
  std::string quoted = "workload '" + std::string(text) + "': ";
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return InvalidArgument(quoted + "expected op:key=value,... (e.g. dense:M=64,N=64,K=64)");
  }
  Workload w;
  w.op = std::string(trim(text.substr(0, colon)));
  if (!is_identifier(w.op))
    return InvalidArgument(quoted + "'" + w.op + "' is not an operator name");
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument(quoted + "'" + std::string(item) + "' is not key=value");
    }
    std::string key(trim(item.substr(0, eq)));
    std::string_view value = trim(item.substr(eq + 1));
    if (!is_identifier(key))
      return InvalidArgument(quoted + "'" + key + "' is not a parameter name");
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size()) {
      return InvalidArgument(quoted + key + "='" + std::string(value) + "' is not an integer");
    }
    if (!w.params.emplace(key, v).second) {
      return InvalidArgument(quoted + "parameter " + key + " is given twice");
    }
  }
  return w;
}

std::string Workload::to_string() const {
  std::string s = op + ":";
  bool first = true;
  for (const auto& [k, v] : params) {
    if (!first) s += ",";
    first = false;
    s += k + "=" + std::to_string(v);
  }
  return s;
}

}  // namespace kiln::ops
