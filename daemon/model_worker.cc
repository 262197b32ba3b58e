#include "daemon/model_worker.h"

#include <nlohmann/json.hpp>

#include "common/safe_file.h"
#include "common/wire.h"
#include "common/worker_process.h"
#include "compiler/compile_model.h"
#include "daemon/job_plan.h"
#include "daemon/job_spec.h"
#include "frontend/onnx_import.h"
#include "ops/registry.h"
#include "runtime/model_artifact.h"
#include "store/record_store.h"

namespace kiln::daemon {

namespace {

// Long enough for a large model's import and compile (the compile times layout transforms);
// a child past it is killed and the job failed.
constexpr double kTasksTimeoutS = 600;
constexpr double kCompileTimeoutS = 3600;

Status compile_and_write(const std::string& spec_yaml, const std::string& base_dir,
                         const std::string& db) {
  KILN_ASSIGN_OR_RETURN(JobSpec spec, parse_job_spec(spec_yaml, "job", base_dir));
  frontend::ImportOptions import;
  for (const auto& [name, dims] : spec.input_shapes) {
    KILN_ASSIGN_OR_RETURN(auto parsed, frontend::parse_input_shape(name + "=" + dims));
    import.input_shapes.emplace(parsed.first, parsed.second);
  }
  KILN_ASSIGN_OR_RETURN(frontend::Graph graph, frontend::import_onnx(spec.model, import));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<store::RecordStore> records,
                        store::RecordStore::open(db, /*read_only=*/true));
  compiler::CompileOptions options;
  options.target = spec.target;
  options.store = records.get();
  KILN_ASSIGN_OR_RETURN(ModelArtifact model, compiler::compile_model(graph, options));
  return write_regular_file_atomically(spec.export_to.compiled_model, serialize_model(model));
}

Result<std::vector<tuner::ModelTask>> tasks_here(const std::string& spec_yaml,
                                                 const std::string& base_dir) {
  KILN_ASSIGN_OR_RETURN(JobSpec spec, parse_job_spec(spec_yaml, "job", base_dir));
  return job_tasks(spec);
}

nlohmann::json status_json(const Status& s) {
  return {{"code", static_cast<int>(s.code())}, {"message", s.message()}};
}

Status status_of_json(const nlohmann::json& j) {
  return Status::Error(static_cast<StatusCode>(j.at("code").get<int>()),
                       j.at("message").get<std::string>());
}

nlohmann::json handle(const nlohmann::json& req) {
  const std::string kind = req.at("kind");
  const std::string spec = req.at("spec");
  const std::string base_dir = req.at("base_dir");
  if (kind == "compile") return status_json(compile_and_write(spec, base_dir, req.at("db")));
  Result<std::vector<tuner::ModelTask>> tasks = tasks_here(spec, base_dir);
  nlohmann::json reply = status_json(tasks.ok() ? Status::Ok() : tasks.status());
  if (tasks.ok()) {
    reply["tasks"] = nlohmann::json::array();
    for (const tuner::ModelTask& t : *tasks) {
      reply["tasks"].push_back({{"template", std::string(t.task.tmpl->name())},
                                {"workload", t.task.workload.to_string()},
                                {"weight", t.weight}});
    }
  }
  return reply;
}

// The child's reply to `req`, or the error that its death, its silence or its reply is.
Result<nlohmann::json> ask_child(const std::string& worker_binary, const nlohmann::json& req,
                                 const std::string& what, double timeout_s) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<WorkerProcess> child,
                        WorkerProcess::spawn_exec({worker_binary, "model-worker"}, {}));
  KILN_RETURN_IF_ERROR(child->send(req.dump()));
  std::string reply, why;
  switch (child->receive(timeout_s, &reply, &why)) {
    case WorkerProcess::Outcome::kReply:
      break;
    case WorkerProcess::Outcome::kTimeout:
      return InvalidArgument("model: " + what + " ran past " + std::to_string(int(timeout_s)) +
                             " s in kiln's model worker (killed)");
    case WorkerProcess::Outcome::kDied:
      return InvalidArgument("model: " + what + " crashed kiln's model worker (" + why + ")");
  }
  nlohmann::json j = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("code")) {
    return InternalError("kiln's model worker sent an unreadable reply");
  }
  return j;
}

}  // namespace

void serve_model_worker(int request_fd, int response_fd) {
  Result<std::string> request = wire::read_frame(request_fd);
  if (!request.ok()) return;
  nlohmann::json reply;
  try {
    reply = handle(nlohmann::json::parse(*request));
  } catch (const nlohmann::json::exception& e) {
    reply = status_json(InternalError(std::string("model worker: malformed request: ") + e.what()));
  }
  (void)wire::write_frame(response_fd, reply.dump());
}

Result<std::vector<tuner::ModelTask>> job_tasks_in_child(const std::string& worker_binary,
                                                         const std::string& spec_yaml,
                                                         const std::string& base_dir) {
  if (worker_binary.empty()) return tasks_here(spec_yaml, base_dir);
  nlohmann::json req = {{"kind", "tasks"}, {"spec", spec_yaml}, {"base_dir", base_dir}};
  KILN_ASSIGN_OR_RETURN(nlohmann::json reply,
                        ask_child(worker_binary, req, "importing it", kTasksTimeoutS));
  KILN_RETURN_IF_ERROR(status_of_json(reply));
  std::vector<tuner::ModelTask> tasks;
  for (const nlohmann::json& t : reply.at("tasks")) {
    const ops::Template* tmpl = ops::find_template(t.at("template").get<std::string>());
    if (!tmpl) return InternalError("model worker: unknown template " + t.at("template").dump());
    KILN_ASSIGN_OR_RETURN(ops::Workload w,
                          ops::Workload::parse(t.at("workload").get<std::string>()));
    tasks.push_back({{tmpl, std::move(w)}, t.at("weight").get<double>()});
  }
  return tasks;
}

Status export_compiled_model_in_child(const std::string& worker_binary,
                                      const std::string& spec_yaml, const std::string& base_dir,
                                      const std::string& db) {
  if (worker_binary.empty()) return compile_and_write(spec_yaml, base_dir, db);
  nlohmann::json req = {
      {"kind", "compile"}, {"spec", spec_yaml}, {"base_dir", base_dir}, {"db", db}};
  KILN_ASSIGN_OR_RETURN(nlohmann::json reply,
                        ask_child(worker_binary, req, "compiling it", kCompileTimeoutS));
  return status_of_json(reply);
}

}  // namespace kiln::daemon
