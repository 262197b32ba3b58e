#include "exchange/measure_input.h"

#include <nlohmann/json.hpp>

namespace kiln {

void MeasureInput::encode(wire::Writer& w) const {
  task.encode(w);
  w.i64(config.index());
  w.str(config.to_json()["entity"].dump());
}

Result<MeasureInput> MeasureInput::decode(wire::Reader& r, ConfigSpaceCache& spaces) {
  KILN_ASSIGN_OR_RETURN(Task task, Task::decode(r));
  int64_t index = r.i64();
  std::string entities_text = r.str();
  if (!r.ok()) return InvalidArgument("measure input on the wire: the frame is truncated");
  std::string where = "config " + std::to_string(index) + " of " + task.key() + ": ";
  nlohmann::json entities =
      nlohmann::json::parse(entities_text, nullptr, /*allow_exceptions=*/false);
  if (entities.is_discarded()) {
    return InstantiationError(where + "the entity list is not JSON: " + entities_text);
  }
  Result<ConfigEntity> config = spaces.get(task).from_json_entities(entities);
  if (!config.ok()) return InstantiationError(where + config.status().message());
  if (config->index() != index) {
    return InstantiationError(where + "the index disagrees with the entities, which are config " +
                              std::to_string(config->index()));
  }
  return MeasureInput{std::move(task), std::move(config).value()};
}

}  // namespace kiln
