#include "runner/local_runner.h"

#include <chrono>
#include <thread>

#include "ops/registry.h"

namespace kiln::runner {

namespace {

enum Request : uint64_t { kPrepare = 1, kRun = 2 };

// Computing a reference is not the kernel's time: preparing gets a generous limit of its own.
constexpr double kPrepareTimeoutS = 600;

std::string task_key(const builder::MeasureInput& input) {
  return std::string(input.tmpl->name()) + "|" + input.workload.to_string();
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void encode_result(const MeasureResult& m, wire::Writer& w) {
  w.i64(static_cast<int64_t>(m.error));
  w.str(m.message);
  w.f64s(m.costs);
  w.f64(m.relative_error);
  w.f64(m.run_seconds);
  w.f64(m.timestamp);
}

MeasureResult decode_result(const std::string& bytes) {
  wire::Reader r(bytes);
  MeasureResult m;
  m.error = static_cast<MeasureError>(r.i64());
  m.message = r.str();
  m.costs = r.f64s();
  m.relative_error = r.f64();
  m.run_seconds = r.f64();
  m.timestamp = r.f64();
  if (!r.ok()) {
    m = MeasureResult{};
    m.error = MeasureError::kRuntimeDevice;
    m.message = "malformed reply from the runner process";
    m.timestamp = unix_now();
  }
  return m;
}

// "out of memory ..." for a task whose reference data does not fit in this process.
std::string out_of_memory(const ops::Template& tmpl, const ops::Workload& w) {
  double bytes = 0;
  for (const auto& specs : {tmpl.inputs(w), tmpl.outputs(w)}) {
    for (const ops::TensorSpec& t : specs) bytes += 4.0 * static_cast<double>(t.num_elements());
  }
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "out of memory: the runner process could not allocate the task's tensors "
                "(%.2f GiB of inputs and outputs, twice that with the reference)",
                bytes / (1 << 30));
  return buf;
}

// The child: holds the reference data of the tasks it was asked to prepare and measures the
// kernels it is sent.
void serve(const RunnerOptions& options, int request_fd, int response_fd) {
  ThreadPool pool(options.resolved_threads());
  ReferenceCache references;
  while (true) {
    Result<std::string> frame = wire::read_frame(request_fd);
    if (!frame.ok()) return;
    wire::Reader r(*frame);
    uint64_t kind = r.u64();
    std::string template_name = r.str();
    Result<ops::Workload> w = ops::Workload::parse(r.str());
    const ops::Template* tmpl = ops::find_template(template_name);
    MeasureResult result;
    if (!tmpl || !w.ok()) {
      result.error = MeasureError::kRuntimeDevice;
      result.message = "runner process: unknown task " + template_name;
    } else {
      try {
        if (kind == kPrepare) {
          references.get(*tmpl, *w, options.measure.input_seed);
        } else {
          builder::BuildResult built = builder::BuildResult::decode(r);
          result = run_built_kernel(built, references.get(*tmpl, *w, options.measure.input_seed),
                                    options.measure, pool, /*timed=*/true);
        }
      } catch (const std::bad_alloc&) {
        result = MeasureResult{};
        result.error = MeasureError::kRuntimeDevice;
        result.message = out_of_memory(*tmpl, *w);
      }
    }
    wire::Writer reply;
    encode_result(result, reply);
    if (!wire::write_frame(response_fd, reply.bytes()).ok()) return;
  }
}

}  // namespace

int RunnerOptions::resolved_threads() const {
  return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

LocalRunner::LocalRunner(RunnerOptions options)
    : Runner(options.env), options_(std::move(options)) {}

LocalRunner::~LocalRunner() = default;

void LocalRunner::restart_worker() {
  worker_.reset();
  prepared_.clear();
  preparing_.clear();
}

Status LocalRunner::start_worker() {
  if (worker_) return Status::Ok();
  RunnerOptions options = options_;
  auto spawned = env().spawn_worker([options](int in, int out) { serve(options, in, out); });
  if (!spawned.ok())
    return Status::Error(spawned.status().code(),
                         "cannot start the runner process: " + spawned.status().message());
  worker_ = std::move(spawned).value();
  return Status::Ok();
}

Status LocalRunner::send_prepare(const builder::MeasureInput& input) {
  KILN_RETURN_IF_ERROR(start_worker());
  wire::Writer prepare;
  prepare.u64(kPrepare);
  prepare.str(input.tmpl->name());
  prepare.str(input.workload.to_string());
  Status sent = worker_->send(prepare.bytes());
  if (!sent.ok()) {
    restart_worker();
    return sent;
  }
  preparing_ = task_key(input);
  return Status::Ok();
}

void LocalRunner::prepare(const builder::MeasureInput& input) {
  std::string task = task_key(input);
  if (prepared_.count(task) || !preparing_.empty()) return;
  (void)send_prepare(input);  // a failure shows, with its reason, when the task runs
}

Status LocalRunner::await_prepared(const builder::MeasureInput& input) {
  std::string task = task_key(input);
  while (!prepared_.count(task)) {
    if (preparing_.empty()) {
      Status sent = send_prepare(input);
      if (!sent.ok())
        return Status::Error(sent.code(), "cannot reach the runner process: " + sent.message());
    }
    std::string reply, why;
    if (worker_->receive(kPrepareTimeoutS, &reply, &why) != WorkerProcess::Outcome::kReply) {
      restart_worker();
      return RuntimeError("the runner process failed computing the reference: " + why);
    }
    if (MeasureResult failed = decode_result(reply); failed.error != MeasureError::kNoError) {
      preparing_.clear();
      return RuntimeError(failed.message);
    }
    prepared_.insert(preparing_);
    preparing_.clear();
  }
  return Status::Ok();
}

std::vector<MeasureResult> LocalRunner::run(const std::vector<builder::MeasureInput>& inputs,
                                            const std::vector<builder::BuildResult>& builds) {
  std::vector<MeasureResult> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (builds[i].error != MeasureError::kNoError) {
      MeasureResult m;
      m.error = builds[i].error;
      m.message = builds[i].message;
      m.build_seconds = builds[i].build_seconds;
      m.timestamp = unix_now();
      results.push_back(std::move(m));
      continue;
    }
    results.push_back(run_one(inputs[i], builds[i]));
    results.back().build_seconds = builds[i].build_seconds;
    if (options_.cooldown_interval_s > 0) {
      idle(options_.cooldown_interval_s);
      cooldown_seconds_ += options_.cooldown_interval_s;
    }
  }
  return results;
}

MeasureResult LocalRunner::run_one(const builder::MeasureInput& input,
                                   const builder::BuildResult& build) {
  auto start = env().now();
  auto failure = [&](MeasureError e, std::string message) {
    MeasureResult m;
    m.error = e;
    m.message = std::move(message);
    m.run_seconds = seconds_between(start, env().now());
    m.timestamp = unix_now();
    return m;
  };
  auto runner_lost = [&](std::string message) {
    MeasureResult m = failure(MeasureError::kRuntimeDevice, std::move(message));
    m.runner_lost = true;
    return m;
  };
  Status ready = await_prepared(input);
  if (!ready.ok()) return runner_lost(ready.message());
  std::string reply, why;
  wire::Writer request;
  request.u64(kRun);
  request.str(input.tmpl->name());
  request.str(input.workload.to_string());
  build.encode(request);
  // The kernel is checked and timed from here until its reply: the cores are its alone.
  before_kernel();
  struct AfterKernel {
    const LocalRunner* runner;
    ~AfterKernel() { runner->after_kernel(); }
  } after_kernel_guard{this};
  if (!worker_->send(request.bytes()).ok()) {
    restart_worker();
    return runner_lost("cannot reach the runner process");
  }
  switch (worker_->receive(options_.timeout_s, &reply, &why)) {
    case WorkerProcess::Outcome::kReply:
      return decode_result(reply);
    case WorkerProcess::Outcome::kTimeout:
      restart_worker();
      return failure(
          MeasureError::kRunTimeout,
          "the kernel ran past the " + std::to_string(options_.timeout_s) + " s timeout");
    case WorkerProcess::Outcome::kDied:
      restart_worker();
      return failure(MeasureError::kRuntimeDevice, "the kernel crashed the runner process: " + why);
  }
  return failure(MeasureError::kUnknownError, "unreachable");
}

}  // namespace kiln::runner
