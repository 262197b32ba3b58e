#include "jobs/job_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "builder/target.h"
#include "common/duration.h"
#include "frontend/onnx_import.h"
#include "ops/registry.h"
#include "ops/workload.h"
#include "tuner/measure_options.h"

namespace kiln::daemon {

namespace {

// Reads one YAML map, field by field, with errors "<origin>: <path>: <problem> (line N)".
class Reader {
 public:
  Reader(std::string origin) : origin_(std::move(origin)) {}

  Status error(const std::string& path, const std::string& problem, const YAML::Node& at) const {
    std::string where;
    if (at.IsDefined() && at.Mark().line >= 0) {
      where = " (line " + std::to_string(at.Mark().line + 1) + ")";
    }
    return InvalidArgument(origin_ + ": " + path + ": " + problem + where);
  }

  // Every key of `map` must be one of `known`.
  Status check_keys(const YAML::Node& map, const std::string& path,
                    const std::set<std::string>& known) const {
    if (!map.IsMap()) return error(path.empty() ? "job" : path, "expected a mapping", map);
    KILN_RETURN_IF_ERROR(check_unique_keys(map, path));
    for (const auto& kv : map) {
      std::string key = kv.first.Scalar();
      if (!known.count(key)) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        return error(join(path, key), "unknown key (known: " + list + ")", kv.first);
      }
    }
    return Status::Ok();
  }

  // yaml-cpp keeps both pairs of a key written twice and a lookup finds only one of them: the
  // other value would be dropped without a word.
  Status check_unique_keys(const YAML::Node& map, const std::string& path) const {
    std::map<std::string, int> first_line;
    for (const auto& kv : map) {
      std::string key = kv.first.Scalar();
      auto [it, inserted] = first_line.emplace(key, kv.first.Mark().line + 1);
      if (!inserted) {
        return error(join(path, key),
                     "given twice (first on line " + std::to_string(it->second) + ")", kv.first);
      }
    }
    return Status::Ok();
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  Result<std::string> text(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) return error(path, "expected a string", n);
    // A NUL cuts a path short where the C library reads it, and a name short where it is shown.
    size_t nul = n.Scalar().find('\0');
    if (nul != std::string::npos) {
      return error(path, "contains a NUL byte (at offset " + std::to_string(nul) + ")", n);
    }
    return n.Scalar();
  }

  Result<int64_t> integer(const YAML::Node& n, const std::string& path, int64_t min,
                          int64_t max) const {
    if (!n.IsScalar()) return error(path, "expected an integer", n);
    const std::string& s = n.Scalar();
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size())
      return error(path, "expected an integer, got '" + s + "'", n);
    if (v < min || v > max) {
      return error(path,
                   "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                       "], got " + s,
                   n);
    }
    return v;
  }

  Result<double> number(const YAML::Node& n, const std::string& path, double min, double max,
                        bool min_exclusive = false) const {
    if (!n.IsScalar()) return error(path, "expected a number", n);
    const std::string& s = n.Scalar();
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size() || !std::isfinite(v)) {
      return error(path, "expected a number, got '" + s + "'", n);
    }
    if (v < min || v > max || (min_exclusive && v == min)) {
      char range[96];
      std::snprintf(range, sizeof range, "%s%g, %g]", min_exclusive ? "(" : "[", min, max);
      return error(path, "expected a number in " + std::string(range) + ", got " + s, n);
    }
    return v;
  }

  Result<bool> boolean(const YAML::Node& n, const std::string& path) const {
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      if (s == "true" || s == "yes" || s == "on") return true;
      if (s == "false" || s == "no" || s == "off") return false;
    }
    return error(path, "expected true or false", n);
  }

  Result<std::vector<std::string>> texts(const YAML::Node& n, const std::string& path) const {
    if (!n.IsSequence()) return error(path, "expected a list of strings", n);
    std::vector<std::string> out;
    for (size_t i = 0; i < n.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(std::string s, text(n[i], path + "[" + std::to_string(i) + "]"));
      out.push_back(s);
    }
    return out;
  }

 private:
  std::string origin_;
};

constexpr int64_t kMaxTrials = int64_t{1} << 40;

std::string absolute(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

Status read_budget(const Reader& r, const YAML::Node& n, JobBudget& b) {
  KILN_RETURN_IF_ERROR(r.check_keys(n, "budget", {"trials", "trials_per_task", "time"}));
  if (n["trials"]) {
    KILN_ASSIGN_OR_RETURN(b.trials, r.integer(n["trials"], "budget.trials", 1, kMaxTrials));
  }
  if (n["trials_per_task"]) {
    KILN_ASSIGN_OR_RETURN(b.trials_per_task,
                          r.integer(n["trials_per_task"], "budget.trials_per_task", 1, kMaxTrials));
  }
  if (n["time"]) {
    KILN_ASSIGN_OR_RETURN(std::string t, r.text(n["time"], "budget.time"));
    Result<double> s = parse_duration("budget.time", t);
    if (!s.ok()) {
      // parse_duration's message starts with the field too; the reader adds the origin and line.
      std::string problem = s.status().message().substr(std::string("budget.time: ").size());
      return r.error("budget.time", problem, n["time"]);
    }
    b.seconds = *s;
  }
  return Status::Ok();
}

// The measure keys of the timing protocol.
constexpr std::array<const char*, 4> kTimingKeys = {"number", "repeat", "min_repeat_ms",
                                                    "cache_flush"};

Status read_measure(const Reader& r, const YAML::Node& n, JobSpec& spec) {
  KILN_RETURN_IF_ERROR(
      r.check_keys(n, "measure",
                   {"number", "repeat", "min_repeat_ms", "timeout", "cooldown_interval",
                    "cache_flush", "threads", "build_timeout", "n_parallel"}));
  runner::RunnerOptions& m = spec.measure;
  auto int_field = [&](const char* key, int* out, int64_t min, int64_t max) -> Status {
    if (!n[key]) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(int64_t v, r.integer(n[key], std::string("measure.") + key, min, max));
    *out = static_cast<int>(v);
    return Status::Ok();
  };
  auto seconds_field = [&](const char* key, double* out, double min, bool exclusive) -> Status {
    if (!n[key]) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(*out,
                          r.number(n[key], std::string("measure.") + key, min, 3600, exclusive));
    return Status::Ok();
  };
  KILN_RETURN_IF_ERROR(int_field("number", &m.measure.time.number, 1, 1000000));
  KILN_RETURN_IF_ERROR(int_field("repeat", &m.measure.time.repeat, 1, 10000));
  KILN_RETURN_IF_ERROR(int_field("min_repeat_ms", &m.measure.time.min_repeat_ms, 0, 600000));
  KILN_RETURN_IF_ERROR(int_field("threads", &m.threads, 1, 1024));
  KILN_RETURN_IF_ERROR(int_field("n_parallel", &spec.n_parallel, 1, 1024));
  KILN_RETURN_IF_ERROR(seconds_field("timeout", &m.timeout_s, 0, true));
  KILN_RETURN_IF_ERROR(seconds_field("cooldown_interval", &m.cooldown_interval_s, 0, false));
  KILN_RETURN_IF_ERROR(seconds_field("build_timeout", &spec.build_timeout_s, 0, true));
  if (n["cache_flush"]) {
    KILN_ASSIGN_OR_RETURN(m.measure.time.enable_cpu_cache_flush,
                          r.boolean(n["cache_flush"], "measure.cache_flush"));
  }
  return Status::Ok();
}

Status read_run_on(const Reader& r, const YAML::Node& n, JobRunOn& on) {
  if (n.IsScalar()) {
    if (n.Scalar() == "local") return Status::Ok();
    return r.error("run_on",
                   "expected local or a mapping with tracker and key, got '" + n.Scalar() + "'", n);
  }
  KILN_RETURN_IF_ERROR(r.check_keys(
      n, "run_on",
      {"tracker", "key", "certs", "token_file", "signing_key", "insecure", "runner_wait"}));
  auto field = [&](const char* key, std::string* out) -> Status {
    if (!n[key]) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(*out, r.text(n[key], std::string("run_on.") + key));
    return Status::Ok();
  };
  KILN_RETURN_IF_ERROR(field("tracker", &on.tracker));
  KILN_RETURN_IF_ERROR(field("key", &on.key));
  KILN_RETURN_IF_ERROR(field("certs", &on.certs_dir));
  KILN_RETURN_IF_ERROR(field("token_file", &on.token_file));
  KILN_RETURN_IF_ERROR(field("signing_key", &on.signing_key_file));
  if (n["runner_wait"]) {
    KILN_ASSIGN_OR_RETURN(on.runner_wait_s,
                          r.number(n["runner_wait"], "run_on.runner_wait", 0, 86400, false));
  }
  if (n["insecure"]) {
    KILN_ASSIGN_OR_RETURN(on.insecure, r.boolean(n["insecure"], "run_on.insecure"));
  }
  if (on.tracker.empty())
    return r.error("run_on.tracker", "missing (HOST:PORT of the farm's tracker)", n);
  if (on.key.empty()) return r.error("run_on.key", "missing (the runners' device kind)", n);
  if (on.certs_dir.empty() && on.token_file.empty() && on.signing_key_file.empty()) {
    return r.error("run_on",
                   "runners execute only signed artifacts: give certs, token_file or signing_key",
                   n);
  }
  return Status::Ok();
}

Status read_tuner_options(const Reader& r, const YAML::Node& n, tuner::TunerSettings& t) {
  KILN_RETURN_IF_ERROR(
      r.check_keys(n, "tuner_options", {"plan_size", "loss", "feature", "diversity_filter_ratio"}));
  if (n["plan_size"]) {
    KILN_ASSIGN_OR_RETURN(int64_t v,
                          r.integer(n["plan_size"], "tuner_options.plan_size", 1, 1000000));
    t.plan_size = static_cast<int>(v);
  }
  if (n["loss"]) {
    KILN_ASSIGN_OR_RETURN(t.loss, r.text(n["loss"], "tuner_options.loss"));
  }
  if (n["feature"]) {
    KILN_ASSIGN_OR_RETURN(t.feature, r.text(n["feature"], "tuner_options.feature"));
  }
  if (n["diversity_filter_ratio"]) {
    KILN_ASSIGN_OR_RETURN(int64_t v, r.integer(n["diversity_filter_ratio"],
                                               "tuner_options.diversity_filter_ratio", 1, 1000));
    t.diversity_filter_ratio = static_cast<int>(v);
  }
  return Status::Ok();
}

Status read_export(const Reader& r, const YAML::Node& n, JobExport& e) {
  KILN_RETURN_IF_ERROR(r.check_keys(n, "export", {"tvm_log", "compiled_model"}));
  if (n["tvm_log"]) {
    KILN_ASSIGN_OR_RETURN(e.tvm_log, r.text(n["tvm_log"], "export.tvm_log"));
  }
  if (n["compiled_model"]) {
    KILN_ASSIGN_OR_RETURN(e.compiled_model, r.text(n["compiled_model"], "export.compiled_model"));
  }
  return Status::Ok();
}

// What the tasks will be: the model exists, or every workload parses and has the template.
Status check_what(const Reader& r, const YAML::Node& root, const JobSpec& spec) {
  if (spec.model.empty() == spec.workloads.empty()) {
    return r.error("model", "give either model (an ONNX file) or workloads (a list), not both",
                   root);
  }
  if (!spec.model.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(spec.model, ec)) {
      return r.error("model", "no such file: " + spec.model, root["model"]);
    }
    if (!spec.template_name.empty()) {
      return r.error("template", "is for workloads; a model's tasks use every template",
                     root["template"]);
    }
    for (size_t i = 0; i < spec.ops.size(); ++i) {
      if (!ops::find_operator(spec.ops[i])) {
        return r.error(
            "ops[" + std::to_string(i) + "]",
            "unknown operator '" + spec.ops[i] + "' (known: " + ops::operator_names() + ")",
            root["ops"]);
      }
    }
    return Status::Ok();
  }
  if (!spec.ops.empty() || !spec.input_shapes.empty()) {
    return r.error(spec.ops.empty() ? "input_shapes" : "ops", "is for a model job",
                   root[spec.ops.empty() ? "input_shapes" : "ops"]);
  }
  for (size_t i = 0; i < spec.workloads.size(); ++i) {
    std::string path = "workloads[" + std::to_string(i) + "]";
    Result<ops::Workload> w = ops::Workload::parse(spec.workloads[i]);
    if (!w.ok()) return r.error(path, w.status().message(), root["workloads"][i]);
    if (i + 1 < spec.workloads.size() && spec.workloads[i + 1].find(':') == std::string::npos) {
      // [dense:M=16,N=16,K=16] is a YAML list of three strings: its commas split it.
      return r.error(path,
                     "'" + spec.workloads[i] + "' is followed by '" + spec.workloads[i + 1] +
                         "': quote each workload in a [...] list (\"dense:M=16,N=16,K=16\"), "
                         "or write one per line (- dense:M=16,N=16,K=16)",
                     root["workloads"][i]);
    }
    Result<std::vector<const ops::Template*>> t = ops::resolve_templates(*w, spec.template_name);
    if (!t.ok()) return r.error(path, t.status().message(), root["workloads"][i]);
    for (const ops::Template* tmpl : *t) {
      Result<ops::Workload> n = tmpl->normalize(*w);
      if (!n.ok()) return r.error(path, n.status().message(), root["workloads"][i]);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<JobSpec> parse_job_spec(const std::string& yaml_text, const std::string& origin,
                               const std::string& base_dir) {
  Reader r(origin);
  if (yaml_text.size() > kMaxJobSpecBytes) {
    return InvalidArgument(origin + ": the job file is " + std::to_string(yaml_text.size()) +
                           " bytes; at most " + std::to_string(kMaxJobSpecBytes) +
                           " (256 KiB) are accepted");
  }
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(origin + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) return InvalidArgument(origin + ": expected a mapping of job fields");
  KILN_RETURN_IF_ERROR(
      r.check_keys(root, "",
                   {"name", "model", "workloads", "template", "ops", "winograd", "input_shapes",
                    "target", "tuner", "tuner_options", "seed", "transfer", "scheduler", "budget",
                    "early_stopping", "measure", "run_on", "priority", "export"}));
  JobSpec spec;
  auto text_field = [&](const char* key, std::string* out) -> Status {
    if (!root[key]) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(*out, r.text(root[key], key));
    return Status::Ok();
  };
  KILN_RETURN_IF_ERROR(text_field("name", &spec.name));
  // kiln jobs and the dashboard print the name: no terminal escapes, no line breaks.
  for (size_t i = 0; i < spec.name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(spec.name[i]);
    if (c < 0x20 || c == 0x7f) {
      char problem[96];
      std::snprintf(problem, sizeof problem, "contains a control character (byte 0x%02x at %zu)", c,
                    i);
      return r.error("name", problem, root["name"]);
    }
  }
  KILN_RETURN_IF_ERROR(text_field("model", &spec.model));
  KILN_RETURN_IF_ERROR(text_field("template", &spec.template_name));
  KILN_RETURN_IF_ERROR(text_field("target", &spec.target));
  KILN_RETURN_IF_ERROR(text_field("tuner", &spec.tuner));
  KILN_RETURN_IF_ERROR(text_field("scheduler", &spec.scheduler));
  if (root["workloads"]) {
    KILN_ASSIGN_OR_RETURN(spec.workloads, r.texts(root["workloads"], "workloads"));
  }
  if (root["ops"]) {
    KILN_ASSIGN_OR_RETURN(spec.ops, r.texts(root["ops"], "ops"));
  }
  if (root["input_shapes"]) {
    const YAML::Node& n = root["input_shapes"];
    if (!n.IsMap()) return r.error("input_shapes", "expected a mapping NAME: DIMS", n);
    KILN_RETURN_IF_ERROR(r.check_unique_keys(n, "input_shapes"));
    for (const auto& kv : n) {
      std::string name = kv.first.Scalar();
      KILN_ASSIGN_OR_RETURN(std::string dims, r.text(kv.second, "input_shapes." + name));
      Result<std::pair<std::string, std::vector<int64_t>>> parsed =
          frontend::parse_input_shape(name + "=" + dims);
      if (!parsed.ok())
        return r.error("input_shapes." + name, parsed.status().message(), kv.second);
      spec.input_shapes.emplace_back(name, dims);
    }
  }
  if (root["seed"]) {
    KILN_ASSIGN_OR_RETURN(int64_t seed,
                          r.integer(root["seed"], "seed", 0, std::numeric_limits<int64_t>::max()));
    spec.seed = static_cast<uint64_t>(seed);
  }
  if (root["winograd"]) {
    KILN_ASSIGN_OR_RETURN(spec.winograd, r.boolean(root["winograd"], "winograd"));
  }
  if (root["transfer"]) {
    KILN_ASSIGN_OR_RETURN(spec.transfer, r.boolean(root["transfer"], "transfer"));
  }
  if (root["early_stopping"]) {
    KILN_ASSIGN_OR_RETURN(spec.early_stopping,
                          r.integer(root["early_stopping"], "early_stopping", 1, kMaxTrials));
  }
  if (root["priority"]) {
    KILN_ASSIGN_OR_RETURN(spec.priority,
                          r.integer(root["priority"], "priority", -1000000, 1000000));
  }
  if (root["tuner_options"]) {
    KILN_RETURN_IF_ERROR(read_tuner_options(r, root["tuner_options"], spec.tuner_settings));
  }
  if (root["budget"]) KILN_RETURN_IF_ERROR(read_budget(r, root["budget"], spec.budget));
  if (root["measure"]) KILN_RETURN_IF_ERROR(read_measure(r, root["measure"], spec));
  // A model job is timed as `kiln tune MODEL` is unless the job gives its own timing.
  const YAML::Node measure = root["measure"];
  if (root["model"] && std::none_of(kTimingKeys.begin(), kTimingKeys.end(),
                                    [&](const char* key) { return measure && measure[key]; })) {
    tuner::use_model_timing(spec.measure.measure.time);
  }
  if (root["run_on"]) KILN_RETURN_IF_ERROR(read_run_on(r, root["run_on"], spec.run_on));
  if (root["export"]) KILN_RETURN_IF_ERROR(read_export(r, root["export"], spec.export_to));

  for (std::string* path :
       {&spec.model, &spec.run_on.certs_dir, &spec.run_on.token_file, &spec.run_on.signing_key_file,
        &spec.export_to.tvm_log, &spec.export_to.compiled_model}) {
    *path = absolute(*path, base_dir);
  }
  KILN_RETURN_IF_ERROR(check_what(r, root, spec));
  if (!spec.export_to.compiled_model.empty() && spec.model.empty()) {
    return r.error("export.compiled_model", "needs a model job", root["export"]);
  }
  Result<Target> target = builder::parse_target(spec.target);
  if (!target.ok()) return r.error("target", target.status().message(), root["target"]);
  if (spec.scheduler != "gradient" && spec.scheduler != "round-robin") {
    return r.error("scheduler", "expected gradient or round-robin, got '" + spec.scheduler + "'",
                   root["scheduler"]);
  }
  // The tuner and its options, as make_tuner will check them when the job runs.
  bool known_tuner = false;
  std::string names = tuner::tuner_names();
  for (size_t pos = 0; pos <= names.size();) {
    size_t end = names.find(" | ", pos);
    if (end == std::string::npos) end = names.size();
    if (names.substr(pos, end - pos) == spec.tuner) known_tuner = true;
    pos = end + 3;
  }
  if (!known_tuner) {
    return r.error("tuner", "unknown tuner '" + spec.tuner + "' (known: " + names + ")",
                   root["tuner"]);
  }
  const tuner::TunerSettings& t = spec.tuner_settings;
  if (spec.tuner.rfind("xgb", 0) != 0 && (t.loss || t.feature || t.diversity_filter_ratio)) {
    return r.error("tuner_options", "loss, feature and diversity_filter_ratio are for xgb tuners",
                   root["tuner_options"]);
  }
  if (t.loss && *t.loss != "rank" && *t.loss != "reg" && *t.loss != "rank-binary") {
    return r.error("tuner_options.loss", "expected rank, reg or rank-binary, got '" + *t.loss + "'",
                   root["tuner_options"]["loss"]);
  }
  if (t.feature && *t.feature != "itervar" && *t.feature != "knob" && *t.feature != "curve") {
    return r.error("tuner_options.feature",
                   "expected itervar, knob or curve, got '" + *t.feature + "'",
                   root["tuner_options"]["feature"]);
  }
  return spec;
}

}  // namespace kiln::daemon
