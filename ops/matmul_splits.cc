#include "ops/matmul_splits.h"

#include "ops/schedule_util.h"

namespace kiln::ops {

void define_matmul_splits(ConfigSpace* space, int64_t m, int64_t n, int64_t k, int parts) {
  space->define_split("tile_y", m, factor_splits(parts));
  space->define_split("tile_x", n, factor_splits(parts));
  space->define_split("tile_k", k, factor_splits(2));
}

Result<MatmulSplits> matmul_splits(std::string_view tmpl, const ConfigEntity& config, int64_t m,
                                   int64_t n, int64_t k, int parts) {
  MatmulSplits s;
  size_t p = static_cast<size_t>(parts);
  KILN_ASSIGN_OR_RETURN(s.y, tile_sizes(tmpl, config, "tile_y", m, p));
  KILN_ASSIGN_OR_RETURN(s.x, tile_sizes(tmpl, config, "tile_x", n, p));
  KILN_ASSIGN_OR_RETURN(s.k, tile_sizes(tmpl, config, "tile_k", k, 2));
  return s;
}

}  // namespace kiln::ops
