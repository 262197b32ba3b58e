#include "farm/convert.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>

#include "farm/proto_fields.h"
#include "ops/registry.h"

namespace kiln::farm {

namespace {

Status bad(const std::string& field, const std::string& why) {
  return InvalidArgument(field + ": " + why);
}

// Quoted for a message, cut to a readable length.
std::string shown(std::string_view s) {
  constexpr size_t kMax = 80;
  std::string out = "'";
  out.append(s.substr(0, kMax));
  if (s.size() > kMax) out += "...";
  return out + "'";
}

// Every character of `value` is alphanumeric or one of `extra`.
Status check_chars(const std::string& field, const std::string& value, std::string_view extra) {
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              extra.find(c) != std::string_view::npos;
    if (!ok) {
      return bad(field,
                 "character " + shown(std::string(1, c)) + " is not allowed in " + shown(value));
    }
  }
  return Status::Ok();
}

Status check_finite(const std::string& field, double v, double min, bool min_exclusive) {
  if (!std::isfinite(v)) return bad(field, "must be a finite number, got " + std::to_string(v));
  if (v < min || (min_exclusive && v == min)) {
    return bad(field, std::string("must be ") + (min_exclusive ? "greater than " : "at least ") +
                          std::to_string(min) + ", got " + std::to_string(v));
  }
  return Status::Ok();
}

Status check_int(const std::string& field, int64_t v, int64_t min, int64_t max) {
  if (v < min || v > max) {
    return bad(field, "must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                          "], got " + std::to_string(v));
  }
  return Status::Ok();
}

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

bool MeasureOptions::operator==(const MeasureOptions& o) const {
  return time.number == o.time.number && time.repeat == o.time.repeat &&
         time.min_repeat_ms == o.time.min_repeat_ms &&
         time.enable_cpu_cache_flush == o.time.enable_cpu_cache_flush &&
         time.warm_up == o.time.warm_up && input_seed == o.input_seed && tolerance == o.tolerance &&
         timeout_s == o.timeout_s && cooldown_interval_s == o.cooldown_interval_s &&
         threads == o.threads && build_timeout_s == o.build_timeout_s;
}

Status check_name(const std::string& field, const std::string& value) {
  if (value.empty()) return bad(field, "is empty");
  if (value.size() > 64) return bad(field, "is longer than 64 characters: " + shown(value));
  return check_chars(field, value, "._-");
}

Result<MeasureError> measure_error_from_proto(int value, const std::string& field) {
  if (value < 0 || value > kMaxMeasureError) {
    return bad(field, "unknown error number " + std::to_string(value) + " (AutoTVM's are 0..8)");
  }
  return static_cast<MeasureError>(value);
}

// ---- Target, Task, config ----

v1::Target to_proto(const Target& t) {
  v1::Target p;
  copy_fields(t, &p);
  return p;
}

Result<Target> from_proto(const v1::Target& p, const std::string& field) {
  KILN_RETURN_IF_ERROR(check_chars(field + ".triple", p.triple(), "._-"));
  KILN_RETURN_IF_ERROR(check_chars(field + ".cpu", p.cpu(), "._-"));
  KILN_RETURN_IF_ERROR(check_chars(field + ".features", p.features(), "._-+,"));
  if (p.cpu().empty()) return bad(field + ".cpu", "is empty");
  if (p.explicit_triple() && p.triple().empty()) {
    return bad(field + ".triple", "is empty but explicit_triple is set");
  }
  Target t;
  copy_fields(p, &t);
  return t;
}

v1::Task to_proto(const Task& t) {
  v1::Task p;
  p.set_template_name(std::string(t.tmpl->name()));
  p.set_workload(t.workload.to_string());
  *p.mutable_target() = to_proto(t.target);
  return p;
}

Result<Task> from_proto(const v1::Task& p, const std::string& field) {
  if (!p.has_target()) return bad(field + ".target", "is missing");
  Task task;
  KILN_ASSIGN_OR_RETURN(task.target, from_proto(p.target(), field + ".target"));
  task.tmpl = ops::find_template(p.template_name());
  if (!task.tmpl) {
    return bad(field + ".template_name", "unknown template " + shown(p.template_name()));
  }
  const std::string wfield = field + ".workload";
  Result<ops::Workload> parsed = ops::Workload::parse(p.workload());
  if (!parsed.ok()) return bad(wfield, parsed.status().message());
  Result<ops::Workload> normalized = task.tmpl->normalize(*parsed);
  if (!normalized.ok()) return bad(wfield, normalized.status().message());
  if (normalized->to_string() != p.workload()) {
    return bad(wfield, "is not normalized: " + shown(p.workload()) + " (expected " +
                           shown(normalized->to_string()) + ")");
  }
  task.workload = std::move(normalized).value();
  return task;
}

v1::ConfigEntity to_proto(const ConfigEntity& c) {
  v1::ConfigEntity p;
  p.set_index(c.index());
  p.set_entities_json(c.to_json()["entity"].dump());
  return p;
}

v1::MeasureInput to_proto(const MeasureInput& in) {
  v1::MeasureInput p;
  *p.mutable_task() = to_proto(in.task);
  *p.mutable_config() = to_proto(in.config);
  return p;
}

Result<MeasureInput> from_proto(const v1::MeasureInput& p, ConfigSpaceCache& spaces,
                                const std::string& field) {
  if (!p.has_task()) return bad(field + ".task", "is missing");
  if (!p.has_config()) return bad(field + ".config", "is missing");
  KILN_ASSIGN_OR_RETURN(Task task, from_proto(p.task(), field + ".task"));
  const std::string efield = field + ".config.entities_json";
  nlohmann::json entities =
      nlohmann::json::parse(p.config().entities_json(), nullptr, /*allow_exceptions=*/false);
  if (entities.is_discarded()) {
    return bad(efield, "is not JSON: " + shown(p.config().entities_json()));
  }
  if (!entities.is_array()) return bad(efield, "is not a JSON list of entities");
  std::string where =
      field + ".config (config " + std::to_string(p.config().index()) + " of " + task.key() + "): ";
  Result<ConfigEntity> config = spaces.get(task).from_json_entities(entities);
  if (!config.ok()) return InstantiationError(where + config.status().message());
  if (config->index() != p.config().index()) {
    return InstantiationError(where + "the index disagrees with the entities, which are config " +
                              std::to_string(config->index()));
  }
  return MeasureInput{std::move(task), std::move(config).value()};
}

// ---- MeasureOptions ----

v1::MeasureOptions to_proto(const MeasureOptions& o) {
  v1::MeasureOptions p;
  copy_fields(o, &p);
  return p;
}

Result<MeasureOptions> from_proto(const v1::MeasureOptions& p, const std::string& field) {
  // The same bounds as `kiln tune`'s options (cli/cmd_tune.cc).
  KILN_RETURN_IF_ERROR(check_int(field + ".number", p.number(), 1, 1'000'000));
  KILN_RETURN_IF_ERROR(check_int(field + ".repeat", p.repeat(), 1, 1'000));
  KILN_RETURN_IF_ERROR(check_int(field + ".min_repeat_ms", p.min_repeat_ms(), 0, 3'600'000));
  KILN_RETURN_IF_ERROR(check_int(field + ".threads", p.threads(), 0, 4096));
  KILN_RETURN_IF_ERROR(check_finite(field + ".tolerance", p.tolerance(), 0, true));
  KILN_RETURN_IF_ERROR(check_finite(field + ".timeout_s", p.timeout_s(), 0, true));
  KILN_RETURN_IF_ERROR(check_finite(field + ".build_timeout_s", p.build_timeout_s(), 0, true));
  KILN_RETURN_IF_ERROR(
      check_finite(field + ".cooldown_interval_s", p.cooldown_interval_s(), 0, false));
  if (p.timeout_s() > 3600) return bad(field + ".timeout_s", "must be at most 3600 seconds");
  if (p.build_timeout_s() > 3600) {
    return bad(field + ".build_timeout_s", "must be at most 3600 seconds");
  }
  if (p.cooldown_interval_s() > 3600) {
    return bad(field + ".cooldown_interval_s", "must be at most 3600 seconds");
  }
  MeasureOptions o;
  copy_fields(p, &o);
  return o;
}

// ---- BuildResult ----

v1::BuildResult to_proto(const BuildResult& b) {
  v1::BuildResult p;
  p.set_error_no(static_cast<v1::MeasureErrorNo>(b.error));
  copy_fields(b, &p);
  v1::KernelManifest* m = p.mutable_manifest();
  copy_fields(b.manifest, m);
  for (int64_t n : b.manifest.buffer_elements) m->add_buffer_elements(n);
  for (const std::string& s : b.manifest.stages) m->add_stages(s);
  for (bool t : b.manifest.stage_timed) m->add_stage_timed(t);
  for (const std::vector<int64_t>& shape : b.manifest.argument_shapes) {
    v1::Shape* sp = m->add_argument_shapes();
    for (int64_t d : shape) sp->add_dims(d);
  }
  return p;
}

namespace {

Result<KernelManifest> manifest_from_proto(const v1::KernelManifest& p, const std::string& field) {
  KernelManifest m;
  for (int i = 0; i < p.buffer_elements_size(); ++i) {
    if (p.buffer_elements(i) < 0) {
      return bad(field + ".buffer_elements[" + std::to_string(i) + "]",
                 "is negative: " + std::to_string(p.buffer_elements(i)));
    }
    m.buffer_elements.push_back(p.buffer_elements(i));
  }
  const int64_t buffers = p.buffer_elements_size();
  KILN_RETURN_IF_ERROR(check_int(field + ".num_inputs", p.num_inputs(), 0, buffers));
  KILN_RETURN_IF_ERROR(
      check_int(field + ".num_outputs", p.num_outputs(), 0, buffers - p.num_inputs()));
  if (p.stage_timed_size() != p.stages_size()) {
    return bad(field + ".stage_timed", "has " + std::to_string(p.stage_timed_size()) +
                                           " entries for " + std::to_string(p.stages_size()) +
                                           " stages");
  }
  for (int i = 0; i < p.stages_size(); ++i) {
    const std::string sfield = field + ".stages[" + std::to_string(i) + "]";
    if (p.stages(i).empty()) return bad(sfield, "is empty");
    KILN_RETURN_IF_ERROR(check_chars(sfield, p.stages(i), "_."));
    m.stages.push_back(p.stages(i));
    m.stage_timed.push_back(p.stage_timed(i));
  }
  if (p.argument_shapes_size() != 0 &&
      p.argument_shapes_size() != p.num_inputs() + p.num_outputs()) {
    return bad(field + ".argument_shapes",
               "has " + std::to_string(p.argument_shapes_size()) + " shapes for " +
                   std::to_string(p.num_inputs() + p.num_outputs()) + " inputs and outputs");
  }
  for (int i = 0; i < p.argument_shapes_size(); ++i) {
    std::vector<int64_t> shape;
    for (int k = 0; k < p.argument_shapes(i).dims_size(); ++k) {
      int64_t d = p.argument_shapes(i).dims(k);
      if (d < 1) {
        return bad(
            field + ".argument_shapes[" + std::to_string(i) + "].dims[" + std::to_string(k) + "]",
            "must be at least 1, got " + std::to_string(d));
      }
      shape.push_back(d);
    }
    m.argument_shapes.push_back(std::move(shape));
  }
  copy_fields(p, &m);
  return m;
}

}  // namespace

Result<BuildResult> from_proto(const v1::BuildResult& p, const std::string& field) {
  BuildResult b;
  KILN_ASSIGN_OR_RETURN(b.error, measure_error_from_proto(p.error_no(), field + ".error_no"));
  KILN_RETURN_IF_ERROR(check_finite(field + ".build_seconds", p.build_seconds(), 0, false));
  if (!p.sha256().empty() && !is_sha256_hex(p.sha256())) {
    return bad(field + ".sha256", "is not 64 lowercase hex digits: " + shown(p.sha256()));
  }
  if (b.error == MeasureError::kNoError) {
    if (p.artifact().empty()) return bad(field + ".artifact", "is empty in a successful build");
    if (p.sha256().empty()) return bad(field + ".sha256", "is missing in a successful build");
    if (!p.has_manifest()) return bad(field + ".manifest", "is missing in a successful build");
    if (p.manifest().stages_size() == 0) {
      return bad(field + ".manifest.stages", "is empty in a successful build");
    }
  }
  if (p.has_manifest()) {
    KILN_ASSIGN_OR_RETURN(b.manifest, manifest_from_proto(p.manifest(), field + ".manifest"));
  }
  copy_fields(p, &b);
  return b;
}

// ---- MeasureResult ----

v1::MeasureResult to_proto(const MeasureResult& m) {
  v1::MeasureResult p;
  p.set_error_no(static_cast<v1::MeasureErrorNo>(m.error));
  copy_fields(m, &p);
  for (double c : m.costs) p.add_costs(c);
  return p;
}

Result<MeasureResult> from_proto(const v1::MeasureResult& p, const std::string& field) {
  MeasureResult m;
  KILN_ASSIGN_OR_RETURN(m.error, measure_error_from_proto(p.error_no(), field + ".error_no"));
  for (int i = 0; i < p.costs_size(); ++i) {
    KILN_RETURN_IF_ERROR(
        check_finite(field + ".costs[" + std::to_string(i) + "]", p.costs(i), 0, false));
    m.costs.push_back(p.costs(i));
  }
  if (m.error == MeasureError::kNoError && m.costs.empty()) {
    return bad(field + ".costs", "is empty in a successful measurement");
  }
  KILN_RETURN_IF_ERROR(check_finite(field + ".relative_error", p.relative_error(), 0, false));
  KILN_RETURN_IF_ERROR(check_finite(field + ".build_seconds", p.build_seconds(), 0, false));
  KILN_RETURN_IF_ERROR(check_finite(field + ".run_seconds", p.run_seconds(), 0, false));
  KILN_RETURN_IF_ERROR(check_finite(field + ".timestamp", p.timestamp(), 0, false));
  if (p.runner_lost() && m.error != MeasureError::kRuntimeDevice) {
    return bad(field + ".runner_lost", "is set but error_no is not RUNTIME_DEVICE");
  }
  copy_fields(p, &m);
  return m;
}

// ---- RunnerCapabilities ----

v1::RunnerCapabilities to_proto(const RunnerCapabilities& c) {
  v1::RunnerCapabilities p;
  copy_fields(c, &p);
  *p.mutable_target() = to_proto(c.target);
  return p;
}

Result<RunnerCapabilities> from_proto(const v1::RunnerCapabilities& p, const std::string& field) {
  RunnerCapabilities c;
  KILN_RETURN_IF_ERROR(check_name(field + ".key", p.key()));
  KILN_RETURN_IF_ERROR(check_name(field + ".name", p.name()));
  // host:port, the host a name, an IPv4 address or a bracketed IPv6 one.
  const std::string afield = field + ".address";
  size_t colon = p.address().rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return bad(afield, "is not host:port: " + shown(p.address()));
  }
  KILN_RETURN_IF_ERROR(check_chars(afield, p.address().substr(0, colon), ".-_[]:"));
  std::string port = p.address().substr(colon + 1);
  bool digits = !port.empty() && port.size() <= 5 &&
                port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return bad(afield, "has no port in 1..65535: " + shown(p.address()));
  }
  if (!p.has_target()) return bad(field + ".target", "is missing");
  KILN_ASSIGN_OR_RETURN(c.target, from_proto(p.target(), field + ".target"));
  KILN_RETURN_IF_ERROR(check_int(field + ".cores", p.cores(), 1, 65536));
  if (p.kiln_version().empty()) return bad(field + ".kiln_version", "is empty");
  KILN_RETURN_IF_ERROR(check_chars(field + ".kiln_version", p.kiln_version(), ".-+_"));
  copy_fields(p, &c);
  return c;
}

}  // namespace kiln::farm
