#include "ops/template.h"

namespace kiln::ops {

int64_t TensorSpec::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Result<Workload> normalize_params(const Workload& w, std::string_view template_name,
                                  const std::vector<ParamSpec>& specs) {
  std::string where = std::string(template_name) + " workload " + w.to_string() + ": ";
  for (const auto& [key, value] : w.params) {
    bool known = false;
    for (const ParamSpec& s : specs) known |= s.key == key;
    if (!known) {
      std::string keys;
      for (const ParamSpec& s : specs) keys += (keys.empty() ? "" : ", ") + s.key;
      return InvalidArgument(where + "unknown parameter '" + key + "' (expected: " + keys + ")");
    }
  }
  Workload out = w;
  for (const ParamSpec& s : specs) {
    auto it = w.params.find(s.key);
    if (it == w.params.end()) {
      if (!s.default_value) return InvalidArgument(where + "missing parameter '" + s.key + "'");
      out.params[s.key] = *s.default_value;
    } else if (it->second < s.min_value) {
      return InvalidArgument(where + s.key + "=" + std::to_string(it->second) +
                             " must be >= " + std::to_string(s.min_value));
    }
  }
  return out;
}

}  // namespace kiln::ops
