// The split knobs of the matmul family (dense_nopack.x86, dense_pack.x86, batch_matmul.x86), as
// AutoTVM defines them: tile_y = split(M), tile_x = split(N), each into `parts` factors, then
// tile_k = split(K, 2), all with the "factors" policy, in that order (so config indices match
// TVM's). A template defines its further knobs after these.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ops/config_space.h"

namespace kiln::ops {

void define_matmul_splits(ConfigSpace* space, int64_t m, int64_t n, int64_t k, int parts);

// The knobs' sizes in `config`, outermost first; an InstantiationError naming `tmpl` and the knob
// when one is missing or does not tile its axis (ops/schedule_util.h, tile_sizes).
struct MatmulSplits {
  std::vector<int64_t> y, x, k;
};
Result<MatmulSplits> matmul_splits(std::string_view tmpl, const ConfigEntity& config, int64_t m,
                                   int64_t n, int64_t k, int parts);

}  // namespace kiln::ops
