#include "daemon/model_worker.h"

#include "common/safe_file.h"
#include "common/wire.h"
#include "common/worker_process.h"
#include "compiler/compile_model.h"
#include "frontend/onnx_import.h"
#include "jobs/job_plan.h"
#include "jobs/job_spec.h"
#include "ops/registry.h"
#include "runtime/model_artifact.h"
#include "store/open_store.h"

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
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> records,
                        store::open_store(db, /*read_only=*/true));
  compiler::CompileOptions options;
  options.target = spec.target;
  options.store = records.get();
  KILN_ASSIGN_OR_RETURN(ModelArtifact model, compiler::compile_model(graph, options));
  return write_file_atomically(spec.export_to.compiled_model, serialize_model(model));
}

Result<std::vector<tuner::ModelTask>> tasks_here(const std::string& spec_yaml,
                                                 const std::string& base_dir) {
  KILN_ASSIGN_OR_RETURN(JobSpec spec, parse_job_spec(spec_yaml, "job", base_dir));
  return job_tasks(spec);
}

// Frames of common/wire.h (not JSON: a spec, a path or an error message may hold any bytes).
// Request: kind ("tasks" | "compile"), spec, base_dir, db. Reply: code, message, then for
// "tasks" the count and each task's template, workload and weight.
std::string handle(wire::Reader& req) {
  const std::string kind = req.str(), spec = req.str(), base_dir = req.str(), db = req.str();
  wire::Writer reply;
  auto put_status = [&](const Status& s) {
    reply.i64(static_cast<int64_t>(s.code()));
    reply.str(s.message());
  };
  if (!req.ok()) {
    put_status(InternalError("model worker: malformed request"));
  } else if (kind == "compile") {
    put_status(compile_and_write(spec, base_dir, db));
  } else {
    Result<std::vector<tuner::ModelTask>> tasks = tasks_here(spec, base_dir);
    put_status(tasks.ok() ? Status::Ok() : tasks.status());
    if (tasks.ok()) {
      reply.u64(tasks->size());
      for (const tuner::ModelTask& t : *tasks) {
        reply.str(t.task.tmpl->name());
        reply.str(t.task.workload.to_string());
        reply.f64(t.weight);
      }
    }
  }
  return reply.bytes();
}

Status status_of(wire::Reader& reply) {
  int64_t code = reply.i64();
  std::string message = reply.str();
  if (!reply.ok() || code < 0 || code > static_cast<int64_t>(StatusCode::kUnimplemented)) {
    return InternalError("kiln's model worker sent an unreadable reply");
  }
  return Status::Error(static_cast<StatusCode>(code), message);
}

// The child's reply to `req`, or the error that its death or its silence is.
Result<std::string> ask_child(const std::string& worker_binary, const std::string& kind,
                              const std::string& spec, const std::string& base_dir,
                              const std::string& db, const std::string& what, double timeout_s) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<WorkerProcess> child,
                        WorkerProcess::spawn_exec({worker_binary, "model-worker"}, {}));
  wire::Writer req;
  req.str(kind);
  req.str(spec);
  req.str(base_dir);
  req.str(db);
  KILN_RETURN_IF_ERROR(child->send(req.bytes()));
  std::string reply, why;
  switch (child->receive(timeout_s, &reply, &why)) {
    case WorkerProcess::Outcome::kReply:
      return reply;
    case WorkerProcess::Outcome::kTimeout:
      return InvalidArgument("model: " + what + " ran past " +
                             std::to_string(static_cast<int>(timeout_s)) +
                             " s in kiln's model worker (killed)");
    case WorkerProcess::Outcome::kDied:
      break;
  }
  return InvalidArgument("model: " + what + " crashed kiln's model worker (" + why + ")");
}

}  // namespace

void serve_model_worker(int request_fd, int response_fd) {
  Result<std::string> request = wire::read_frame(request_fd);
  if (!request.ok()) return;
  wire::Reader req(*request);
  (void)wire::write_frame(response_fd, handle(req));
}

Result<std::vector<tuner::ModelTask>> job_tasks_in_child(const std::string& worker_binary,
                                                         const std::string& spec_yaml,
                                                         const std::string& base_dir) {
  if (worker_binary.empty()) return tasks_here(spec_yaml, base_dir);
  KILN_ASSIGN_OR_RETURN(std::string bytes, ask_child(worker_binary, "tasks", spec_yaml, base_dir,
                                                     "", "importing it", kTasksTimeoutS));
  wire::Reader reply(bytes);
  KILN_RETURN_IF_ERROR(status_of(reply));
  std::vector<tuner::ModelTask> tasks;
  const uint64_t n = reply.u64();
  for (uint64_t i = 0; reply.ok() && i < n; ++i) {
    const std::string name = reply.str(), workload = reply.str();
    const double weight = reply.f64();
    if (!reply.ok()) break;
    const ops::Template* tmpl = ops::find_template(name);
    if (!tmpl) return InternalError("kiln's model worker named an unknown template: " + name);
    KILN_ASSIGN_OR_RETURN(ops::Workload w, ops::Workload::parse(workload));
    tasks.push_back({{tmpl, std::move(w)}, weight});
  }
  if (!reply.ok()) return InternalError("kiln's model worker sent an unreadable reply");
  return tasks;
}

Status export_compiled_model_in_child(const std::string& worker_binary,
                                      const std::string& spec_yaml, const std::string& base_dir,
                                      const std::string& db) {
  if (worker_binary.empty()) return compile_and_write(spec_yaml, base_dir, db);
  KILN_ASSIGN_OR_RETURN(std::string bytes, ask_child(worker_binary, "compile", spec_yaml, base_dir,
                                                     db, "compiling it", kCompileTimeoutS));
  wire::Reader reply(bytes);
  return status_of(reply);
}

}  // namespace kiln::daemon
