// Config spaces by task key, built once: a builder or runner worker sees many configs of few
// tasks, and building a space (and its multi_filter cache) costs far more than a lookup.
// Not thread-safe: one per worker.
#pragma once

#include <map>
#include <string>

#include "exchange/task.h"
#include "ops/config_space.h"

namespace kiln {

class ConfigSpaceCache {
 public:
  // The task's space. REQUIRES task.tmpl; the reference stays valid while the cache lives.
  const ConfigSpace& get(const Task& task);

 private:
  std::map<std::string, ConfigSpace> spaces_;
};

}  // namespace kiln
