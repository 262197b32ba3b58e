#include "compiler/concat_in_place.h"

#include <algorithm>
#include <map>
#include <utility>

namespace kiln::compiler {

bool place_concat_inputs(std::vector<ModelValue>& values, const std::vector<int>& inputs,
                         int output) {
  const ModelValue& out = values[output];
  if (out.kind != ModelValueKind::kIntermediate || out.dtype != ModelDType::kFloat32) {
    return false;
  }
  const int64_t out_elements = out.num_elements();
  constexpr int64_t kAlignFloats = 16;  // 64 bytes: where kernels' vector rows start
  std::map<int, int64_t> place;         // storage value -> its offset in `output`
  int64_t offset = 0;
  for (int id : inputs) {
    const ViewRoot at = resolve_view(values, id);
    const ModelValue& storage = values[at.value];
    if (at.value == output || storage.kind != ModelValueKind::kIntermediate ||
        storage.dtype != ModelDType::kFloat32 || values[id].dtype != ModelDType::kFloat32) {
      return false;
    }
    const int64_t base = offset - at.offset;
    if (base < 0 || base % kAlignFloats != 0 || storage.num_elements() > out_elements - base) {
      return false;
    }
    auto [it, inserted] = place.emplace(at.value, base);
    if (!inserted && it->second != base) return false;
    offset += values[id].num_elements();
  }
  if (offset != out_elements) return false;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // [begin, end) of each storage in `output`
  for (const auto& [id, base] : place) ranges.emplace_back(base, base + values[id].num_elements());
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) return false;
  }
  for (const auto& [id, base] : place) {
    values[id].kind = ModelValueKind::kView;
    values[id].view_of = output;
    values[id].view_offset = base;
  }
  return true;
}

}  // namespace kiln::compiler
