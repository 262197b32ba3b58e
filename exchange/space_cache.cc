#include "exchange/space_cache.h"

namespace kiln {

const ConfigSpace& ConfigSpaceCache::get(const Task& task) {
  std::string key = task.key();
  auto it = spaces_.find(key);
  if (it == spaces_.end()) it = spaces_.emplace(key, task.tmpl->space(task.workload)).first;
  return it->second;
}

}  // namespace kiln
