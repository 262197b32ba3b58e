#include "ops/node_view.h"

namespace kiln::ops {

Status NodeView::not_expressible(const std::string& why) const {
  return InvalidArgument(where() + ": " + why);
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s.empty() ? "scalar" : s;
}

}  // namespace kiln::ops
