// MeasureInput: one trial to build and measure (DESIGN.md "Contracts") = a task and a config of
// its space. On the wire the config travels as its entity list, the authoritative form; its
// index goes along as a convenience and must agree with the entities.
#pragma once

#include "common/status.h"
#include "common/wire.h"
#include "exchange/space_cache.h"
#include "exchange/task.h"
#include "ops/config_space.h"

namespace kiln {

struct MeasureInput {
  Task task;
  ConfigEntity config;  // a config of task.tmpl->space(task.workload)

  // The task header (Task::encode), then the config's index and its entity list as JSON text.
  void encode(wire::Writer& w) const;
  // Reads what encode() wrote and rebuilds the config from its entities in the task's space
  // (from `spaces`). Errors: kInvalidArgument for a malformed frame or task header;
  // kInstantiation when the entities are not a config of the space or their index differs
  // from the one sent (the message names both indices).
  static Result<MeasureInput> decode(wire::Reader& r, ConfigSpaceCache& spaces);
};

}  // namespace kiln
