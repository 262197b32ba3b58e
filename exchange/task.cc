#include "exchange/task.h"

#include "ops/registry.h"

namespace kiln {

std::string task_key(std::string_view template_name, std::string_view workload,
                     std::string_view target) {
  std::string key;
  key.reserve(template_name.size() + workload.size() + target.size() + 2);
  key.append(template_name).append("|").append(workload).append("|").append(target);
  return key;
}

std::string Task::key() const {
  return task_key(tmpl->name(), workload.to_string(), target.to_string());
}

void encode_target(const Target& target, wire::Writer& w) {
  w.str(target.triple);
  w.str(target.cpu);
  w.str(target.features);
  w.u64(target.explicit_features ? 1 : 0);
  w.u64(target.explicit_triple ? 1 : 0);
}

Target decode_target(wire::Reader& r) {
  Target t;
  t.triple = r.str();
  t.cpu = r.str();
  t.features = r.str();
  t.explicit_features = r.u64() != 0;
  t.explicit_triple = r.u64() != 0;
  return t;
}

void Task::encode(wire::Writer& w) const {
  w.str(tmpl->name());
  w.str(workload.to_string());
  encode_target(target, w);
}

Result<Task> Task::decode(wire::Reader& r) {
  std::string template_name = r.str();
  std::string workload_text = r.str();
  Task task;
  task.target = decode_target(r);
  if (!r.ok()) return InvalidArgument("task header on the wire: the frame is truncated");
  std::string where = "task header on the wire (" + template_name + " " + workload_text + "): ";
  task.tmpl = ops::find_template(template_name);
  if (!task.tmpl) return InvalidArgument(where + "unknown template '" + template_name + "'");
  Result<ops::Workload> parsed = ops::Workload::parse(workload_text);
  if (!parsed.ok()) return InvalidArgument(where + parsed.status().message());
  Result<ops::Workload> normalized = task.tmpl->normalize(*parsed);
  if (!normalized.ok()) return InvalidArgument(where + normalized.status().message());
  if (normalized->to_string() != workload_text) {
    return InvalidArgument(where + "the workload is not normalized (expected " +
                           normalized->to_string() + ")");
  }
  task.workload = std::move(normalized).value();
  return task;
}

}  // namespace kiln
