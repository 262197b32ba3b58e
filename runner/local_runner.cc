#include "runner/local_runner.h"

#include <sys/resource.h>

#include <cmath>
#include <thread>

namespace kiln::runner {

namespace {

enum Request : uint64_t { kPrepare = 1, kRun = 2 };

// Computing a reference is not the kernel's time: preparing gets a generous limit of its own.
constexpr double kPrepareTimeoutS = 600;

// The runner process's reply, or a RUNTIME_DEVICE result saying why it could not be read.
MeasureResult decode_reply(const std::string& bytes) {
  wire::Reader r(bytes);
  Result<MeasureResult> m = MeasureResult::decode(r);
  if (m.ok()) return std::move(m).value();
  return MeasureResult::failure(MeasureError::kRuntimeDevice,
                                "malformed reply from the runner process: " + m.status().message());
}

// "out of memory ..." for a task whose reference data does not fit in this process.
std::string out_of_memory(const Task& task) {
  double bytes = 0;
  for (const auto& specs : {task.tmpl->inputs(task.workload), task.tmpl->outputs(task.workload)}) {
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
// One request to the child: the kind, the task header, and for kRun the BuildResult.
// Gives the next config `seconds` of CPU time from now (RLIMIT_CPU's soft limit, SIGXCPU past it).
void limit_cpu_for_next_config(double seconds) {
  if (seconds <= 0) return;
  rusage used{};
  getrusage(RUSAGE_SELF, &used);
  rlimit cpu{};
  getrlimit(RLIMIT_CPU, &cpu);
  rlim_t want = static_cast<rlim_t>(used.ru_utime.tv_sec + used.ru_stime.tv_sec + 1 +
                                    static_cast<long>(std::ceil(seconds)));
  if (cpu.rlim_max != RLIM_INFINITY && want > cpu.rlim_max) want = cpu.rlim_max;
  cpu.rlim_cur = want;
  setrlimit(RLIMIT_CPU, &cpu);
}

MeasureResult handle(wire::Reader& request, const RunnerOptions& options,
                     ReferenceCache& references, ThreadPool& pool) {
  uint64_t kind = request.u64();
  Result<Task> task = Task::decode(request);
  auto refuse = [](const std::string& why) {
    return MeasureResult::failure(MeasureError::kRuntimeDevice, "runner process: " + why);
  };
  if (!task.ok()) return refuse(task.status().message());
  if (kind != kPrepare && kind != kRun) return refuse("unknown request " + std::to_string(kind));
  try {
    // A reference may take long to compute: as long as preparing may, not one config's budget.
    if (options.max_cpu_s_per_config > 0) limit_cpu_for_next_config(kPrepareTimeoutS);
    const ReferenceData& reference = references.get(*task, options.measure.input_seed);
    if (kind == kPrepare) return MeasureResult{};
    Result<BuildResult> built = BuildResult::decode(request);
    if (!built.ok()) return refuse(built.status().message());
    limit_cpu_for_next_config(options.max_cpu_s_per_config * options.resolved_threads());
    return run_built_kernel(*built, reference, options.measure, pool, /*timed=*/true);
  } catch (const std::bad_alloc&) {
    return MeasureResult::failure(MeasureError::kRuntimeDevice, out_of_memory(*task));
  }
}

void serve(const RunnerOptions& options, int request_fd, int response_fd) {
  ThreadPool pool(options.resolved_threads());
  ReferenceCache references;
  wire::serve_frames(request_fd, response_fd, [&](wire::Reader& request, wire::Writer& reply) {
    handle(request, options, references, pool).encode(reply);
  });
}

// The options an exec'd runner process needs, as the first frame it reads.
void encode_options(const RunnerOptions& o, wire::Writer& w) {
  w.i64(o.measure.time.number);
  w.i64(o.measure.time.repeat);
  w.i64(o.measure.time.min_repeat_ms);
  w.u64(o.measure.time.enable_cpu_cache_flush ? 1 : 0);
  w.u64(o.measure.input_seed);
  w.f64(o.measure.tolerance);
  w.i64(o.resolved_threads());
  w.f64(o.max_cpu_s_per_config);
}

Result<RunnerOptions> decode_options(const std::string& bytes) {
  wire::Reader r(bytes);
  RunnerOptions o;
  o.measure.time.number = static_cast<int>(r.i64());
  o.measure.time.repeat = static_cast<int>(r.i64());
  o.measure.time.min_repeat_ms = static_cast<int>(r.i64());
  o.measure.time.enable_cpu_cache_flush = r.u64() != 0;
  o.measure.input_seed = r.u64();
  o.measure.tolerance = r.f64();
  o.threads = static_cast<int>(r.i64());
  o.max_cpu_s_per_config = r.f64();
  if (!r.ok() || o.measure.time.number < 1 || o.measure.time.repeat < 1 || o.threads < 1) {
    return InvalidArgument("measure-worker: malformed options frame");
  }
  return o;
}

}  // namespace

void serve_exec_worker(int request_fd, int response_fd) {
  Result<std::string> first = wire::read_frame(request_fd);
  if (!first.ok()) return;
  Result<RunnerOptions> options = decode_options(*first);
  if (!options.ok()) {
    std::fprintf(stderr, "kiln: %s\n", options.status().message().c_str());
    return;
  }
  serve(*options, request_fd, response_fd);
}

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
  auto spawn = [&]() -> Result<std::unique_ptr<WorkerProcess>> {
    if (options.worker_binary.empty()) {
      return env().spawn_worker([options](int in, int out) { serve(options, in, out); });
    }
    WorkerProcess::Limits limits;
    limits.address_space_bytes = options.max_memory_bytes;
    limits.scratch_parent = options.scratch_parent;
    std::vector<std::string> argv = options.exec_prefix;
    argv.push_back(options.worker_binary);
    argv.push_back("measure-worker");
    return WorkerProcess::spawn_exec(argv, limits);
  };
  Result<std::unique_ptr<WorkerProcess>> spawned = spawn();
  if (!spawned.ok())
    return Status::Error(spawned.status().code(),
                         "cannot start the runner process: " + spawned.status().message());
  worker_ = std::move(spawned).value();
  if (!options.worker_binary.empty()) {
    wire::Writer first;
    encode_options(options, first);
    if (Status sent = worker_->send(first.bytes()); !sent.ok()) {
      worker_.reset();
      return Status::Error(sent.code(), "cannot start the runner process: " + sent.message());
    }
  }
  return Status::Ok();
}

Status LocalRunner::send_prepare(const MeasureInput& input) {
  KILN_RETURN_IF_ERROR(start_worker());
  wire::Writer prepare;
  prepare.u64(kPrepare);
  input.task.encode(prepare);
  Status sent = worker_->send(prepare.bytes());
  if (!sent.ok()) {
    restart_worker();
    return sent;
  }
  preparing_ = input.task.key();
  return Status::Ok();
}

void LocalRunner::prepare(const MeasureInput& input) {
  std::string task = input.task.key();
  if (prepared_.count(task) || !preparing_.empty()) return;
  (void)send_prepare(input);  // a failure shows, with its reason, when the task runs
}

Status LocalRunner::await_prepared(const MeasureInput& input) {
  std::string task = input.task.key();
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
    if (MeasureResult failed = decode_reply(reply); failed.error != MeasureError::kNoError) {
      preparing_.clear();
      return RuntimeError(failed.message);
    }
    prepared_.insert(preparing_);
    preparing_.clear();
  }
  return Status::Ok();
}

std::vector<MeasureResult> LocalRunner::run(const std::vector<MeasureInput>& inputs,
                                            const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (builds[i].error != MeasureError::kNoError) {
      results.push_back(MeasureResult::of_failed_build(builds[i]));
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

MeasureResult LocalRunner::run_one(const MeasureInput& input, const BuildResult& build) {
  auto start = env().now();
  auto failure = [&](MeasureError e, std::string message) {
    MeasureResult m = MeasureResult::failure(e, std::move(message));
    m.run_seconds = seconds_between(start, env().now());
    return m;
  };
  auto runner_lost = [&](std::string message) {
    MeasureResult m = failure(MeasureError::kRuntimeDevice, std::move(message));
    m.runner_lost = true;
    return m;
  };
  Status ready = await_prepared(input);
  // A runner process that answered (e.g. the task's tensors do not fit its memory limit) gave
  // the task's result; one that died or could not be reached is lost.
  if (!ready.ok()) {
    return worker_ ? failure(MeasureError::kRuntimeDevice, ready.message())
                   : runner_lost(ready.message());
  }
  std::string reply, why;
  wire::Writer request;
  request.u64(kRun);
  input.task.encode(request);
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
      return decode_reply(reply);
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
