// The device farm's figures, printed, not asserted (machines are shared and noisy):
//
//   farm_bench [--runners 16] [--trials-per-runner 8] [--one-runner-trials 24]
//              [--lease-threads 8] [--lease-seconds 3]
//
//   (a) trials per second of `--runners` runner processes against one (target: >= 12x with 16),
//   (b) lease/release cycles per second the tracker sustains (target: >= 2,000),
//   (c) the per-trial overhead of a remote runner over the local runner (target: <= 20 ms).
//
// Every trial takes the real path: a `kiln tracker` process with TLS (certificates from `kiln
// certs init`), runner processes that register with it, leases, artifacts signed with the farm's
// key and checked by the runner, and a measurement child exec'd per runner with the usual limits.
// The kernel is bench/sleep_kernel.c, a shared object with kiln's kernel ABI that sleeps 100 ms
// and copies its input to its output, so that measuring it costs a known time; its template
// ("sleep.bench", below) exists in this binary only. So this binary is also the runners
// (`farm_bench runner ...`, run_runner as `kiln runner` calls it) and their measurement children
// (`farm_bench measure-worker`), all of which know the template; the tracker is the kiln binary.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "builder/target.h"
#include "common/sha256.h"
#include "farm/security.h"
#include "farm/signing.h"
#include "ops/registry.h"
#include "proto/kiln.grpc.pb.h"
#include "runner/local_runner.h"
#include "runner/remote_runner.h"
#include "runner/runner_service.h"
#include "tests/farm/child_process.h"

namespace kiln {
namespace {

using farm::testing::ChildProcess;

constexpr int64_t kSleepElements = 256;  // KILN_SLEEP_ELEMENTS in sleep_kernel.c

// The sleep kernel's task: out = in over kSleepElements floats. Its configs differ only by a
// `variant` knob, so that every trial of a batch is a distinct config; all share the one
// prebuilt artifact (kiln's builder does not build it).
class SleepTemplate : public ops::Template {
 public:
  std::string_view name() const override { return "sleep.bench"; }
  std::string_view op() const override { return "sleep"; }
  Result<ops::Workload> normalize(const ops::Workload& w) const override {
    return ops::normalize_params(w, name(),
                                 {{"N", kSleepElements, kSleepElements, kSleepElements}});
  }
  std::vector<ops::TensorSpec> inputs(const ops::Workload&) const override {
    return {{"in", {kSleepElements}}};
  }
  std::vector<ops::TensorSpec> outputs(const ops::Workload&) const override {
    return {{"out", {kSleepElements}}};
  }
  double flop(const ops::Workload&) const override { return kSleepElements; }
  ConfigSpace space(const ops::Workload&) const override {
    std::vector<nlohmann::json> variants;
    for (int i = 0; i < 4096; ++i) variants.push_back(i);
    ConfigSpace s;
    s.define_knob("variant", variants);
    return s;
  }
  ConfigEntity fallback(const ops::Workload&, const ConfigSpace& space,
                        const ops::TargetInfo&) const override {
    return space.get(0);
  }
  Result<ir::Program> instantiate(const ops::Workload&, const ConfigEntity&, const ops::TargetInfo&,
                                  const ops::ActivationLayout&) const override {
    return InstantiationError("sleep.bench: its kernel is bench/sleep_kernel.c, built by CMake");
  }
  void reference(const ops::Workload&, const std::vector<const float*>& in,
                 const std::vector<float*>& out) const override {
    for (int64_t i = 0; i < kSleepElements; ++i) out[0][i] = in[0][i];
  }
  nlohmann::json tvm_args(const ops::Workload&) const override {
    return nlohmann::json::array({nlohmann::json::array({"TENSOR", {kSleepElements}, "float32"})});
  }
};

std::string self_binary() {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  return n > 0 ? std::string(self, n) : "";
}

// `farm_bench runner --tracker A --key K --name N --certs D`: a farm runner, as `kiln runner`.
int runner_main(int argc, char** argv) {
  runner::RunnerServerOptions o;
  CLI::App app("farm_bench runner");
  app.add_option("--tracker", o.tracker)->required();
  app.add_option("--key", o.key)->required();
  app.add_option("--name", o.name)->required();
  app.add_option("--certs", o.auth.certs_dir)->required();
  CLI11_PARSE(app, argc, argv);
  o.kiln_version = "farm_bench";
  o.service.worker_binary = self_binary();
  o.service.cores = 1;
  o.service.max_memory_bytes = uint64_t{8192} << 20;  // kiln runner's defaults
  o.service.max_cpu_s_per_config = 300;
  Status s = runner::run_runner(o);
  if (!s.ok()) std::fprintf(stderr, "farm_bench runner: %s\n", s.message().c_str());
  return s.ok() ? 0 : 1;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Trials {
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
};

// `n` distinct configs of the sleep task, all with the sleep kernel's artifact.
Trials sleep_trials(const Task& task, const BuildResult& build, int n, int first_variant) {
  Trials t;
  const ConfigSpace space = task.tmpl->space(task.workload);
  for (int i = 0; i < n; ++i) {
    t.inputs.push_back(MeasureInput{task, space.get((first_variant + i) % space.size())});
    t.builds.push_back(build);
  }
  return t;
}

// Seconds `runner` takes to measure `n` trials; every one must succeed.
Result<double> time_trials(runner::Runner& runner, const Task& task, const BuildResult& build,
                           int n, int* variant) {
  Trials t = sleep_trials(task, build, n, *variant);
  *variant += n;
  auto start = std::chrono::steady_clock::now();
  std::vector<MeasureResult> results = runner.run(t.inputs, t.builds);
  double seconds = seconds_since(start);
  for (const MeasureResult& m : results) {
    if (m.error != MeasureError::kNoError) {
      return RuntimeError("a sleep trial failed (error " + std::to_string(int(m.error)) +
                          "): " + m.message);
    }
  }
  return seconds;
}

runner::RunnerOptions measure_options() {
  runner::RunnerOptions o;
  o.measure.time.number = 1;
  o.measure.time.repeat = 1;
  o.measure.time.min_repeat_ms = 0;
  o.cooldown_interval_s = 0;
  o.timeout_s = 10;
  o.threads = 1;
  return o;
}

// Lease/release cycles per second against the tracker, from `threads` clients over `seconds`,
// with 4 fake runners per client registered under their own key.
Result<double> lease_cycles_per_second(const std::string& tracker,
                                       std::shared_ptr<grpc::ChannelCredentials> creds, int threads,
                                       double seconds) {
  auto stub = v1::Tracker::NewStub(grpc::CreateChannel(tracker, creds));
  for (int i = 0; i < 4 * threads; ++i) {
    v1::RegisterRequest r;
    v1::RunnerCapabilities* c = r.mutable_capabilities();
    c->set_key("lease-bench");
    c->set_name("lease-bench-" + std::to_string(i));
    c->set_address("127.0.0.1:9");
    c->mutable_target()->set_cpu("x86-64");
    c->set_cores(1);
    c->set_kiln_version("farm_bench");
    v1::RegisterReply reply;
    grpc::ClientContext ctx;
    grpc::Status s = stub->Register(&ctx, r, &reply);
    if (!s.ok()) return IoError("registering a fake runner: " + s.error_message());
  }
  std::atomic<int64_t> cycles{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::vector<std::thread> clients;
  const auto stop = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([&, t] {
      // A channel per client, as separate tuning hosts would have.
      grpc::ChannelArguments args;
      args.SetInt("kiln.bench.client", t);  // distinct arguments: distinct connections
      auto own = v1::Tracker::NewStub(grpc::CreateCustomChannel(tracker, creds, args));
      while (std::chrono::steady_clock::now() < stop && !failed) {
        v1::LeaseRequest request;
        request.set_key("lease-bench");
        request.set_lease_seconds(60);
        request.set_wait_seconds(5);
        request.set_client("farm_bench");
        v1::Lease lease;
        grpc::ClientContext ctx;
        grpc::Status s = own->RequestRunner(&ctx, request, &lease);
        if (s.ok()) {
          v1::ReleaseLeaseRequest release;
          release.set_lease_id(lease.lease_id());
          v1::ReleaseLeaseReply released;
          grpc::ClientContext ctx2;
          s = own->ReleaseLease(&ctx2, release, &released);
        }
        if (!s.ok()) {
          if (!failed.exchange(true)) failure = s.error_message();
          return;
        }
        ++cycles;
      }
    });
  }
  auto start = std::chrono::steady_clock::now();
  for (std::thread& c : clients) c.join();
  if (failed) return IoError("a lease/release cycle failed: " + failure);
  return static_cast<double>(cycles.load()) / seconds_since(start);
}

int bench_main(int argc, char** argv) {
  int runners = 16;
  int trials_per_runner = 8;
  int one_runner_trials = 24;
  int lease_threads = 8;
  double lease_seconds = 3;
  CLI::App app("farm_bench: the device farm's throughput and overheads");
  app.add_option("--runners", runners, "runner processes for (a)")->check(CLI::Range(2, 64));
  app.add_option("--trials-per-runner", trials_per_runner, "timed trials per runner in (a)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--one-runner-trials", one_runner_trials, "timed trials on one runner")
      ->check(CLI::Range(4, 10000));
  app.add_option("--lease-threads", lease_threads, "client threads for (b)")
      ->check(CLI::Range(1, 256));
  app.add_option("--lease-seconds", lease_seconds, "seconds of lease/release cycles for (b)")
      ->check(CLI::Range(0.5, 600.0));
  CLI11_PARSE(app, argc, argv);

  Result<ops::Workload> w = ops::Workload::parse("sleep:N=" + std::to_string(kSleepElements));
  Task task{ops::find_template("sleep.bench"), *w, builder::host_target()};
  std::ifstream so(KILN_SLEEP_KERNEL, std::ios::binary);
  std::stringstream bytes;
  bytes << so.rdbuf();
  BuildResult build;
  build.shared_object = bytes.str();
  if (!so || build.shared_object.empty()) {
    std::fprintf(stderr, "farm_bench: cannot read %s\n", KILN_SLEEP_KERNEL);
    return 1;
  }
  build.artifact_sha256 = sha256_hex(build.shared_object);
  build.manifest.name = "sleep_kernel";
  build.manifest.buffer_elements = {kSleepElements, kSleepElements};
  build.manifest.argument_shapes = {{kSleepElements}, {kSleepElements}};
  build.manifest.num_inputs = 1;
  build.manifest.num_outputs = 1;
  build.manifest.stages = {"kiln_sleep_stage"};
  build.manifest.stage_timed = {true};
  int variant = 0;
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "farm_bench: %s\n", s.message().c_str());
    return 1;
  };

  // The local runner first, as `kiln tune` runs it (a forked child), before any gRPC thread.
  double local_per_trial = 0;
  {
    runner::LocalRunner local(measure_options());
    if (Result<double> warm = time_trials(local, task, build, 2, &variant); !warm.ok()) {
      return fail(warm.status());
    }
    Result<double> t = time_trials(local, task, build, one_runner_trials, &variant);
    if (!t.ok()) return fail(t.status());
    local_per_trial = *t / one_runner_trials;
  }

  std::string dir = (std::filesystem::temp_directory_path() / "farm_bench_XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    std::fprintf(stderr, "farm_bench: cannot create a directory from %s\n", dir.c_str());
    return 1;
  }
  struct RemoveDir {
    std::string path;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove_dir{dir};
  const std::string certs = dir + "/certs";
  if (std::system((std::string(KILN_BINARY) + " certs init " + certs + " >/dev/null").c_str()) !=
      0) {
    std::fprintf(stderr, "farm_bench: kiln certs init failed\n");
    return 1;
  }
  ChildProcess tracker(KILN_BINARY, {"tracker", "--listen", "127.0.0.1:0", "--certs", certs},
                       "kiln tracker listening on ");
  if (tracker.address().empty()) {
    std::fprintf(stderr, "farm_bench: the tracker did not start: %s\n", tracker.output().c_str());
    return 1;
  }
  std::vector<std::unique_ptr<ChildProcess>> farm;
  auto add_runner = [&]() -> bool {
    const std::string name = "sleep-" + std::to_string(farm.size());
    farm.push_back(std::make_unique<ChildProcess>(
        self_binary(),
        std::vector<std::string>{"runner", "--tracker", tracker.address(), "--key", "sleep",
                                 "--name", name, "--certs", certs},
        "kiln runner " + name + " listening on "));
    if (farm.back()->line().empty()) {
      std::fprintf(stderr, "farm_bench: runner %s did not start: %s\n", name.c_str(),
                   farm.back()->output().c_str());
      return false;
    }
    return true;
  };

  runner::RemoteRunnerOptions ro;
  ro.tracker = tracker.address();
  ro.key = "sleep";
  ro.auth.certs_dir = certs;
  Result<std::string> key = farm::read_signing_key(farm::cert_files(certs).token);
  if (!key.ok()) return fail(key.status());
  ro.signing_key = *key;
  ro.measure = measure_options();
  ro.client = "farm_bench";
  Result<std::unique_ptr<runner::RemoteRunner>> remote = runner::RemoteRunner::create(ro);
  if (!remote.ok()) return fail(remote.status());

  // (a) and (c): one runner, then `runners`; each warmed up first (its measurement child
  // started, the artifact uploaded, the reference computed).
  if (!add_runner()) return 1;
  if (Result<double> warm = time_trials(**remote, task, build, 4, &variant); !warm.ok()) {
    return fail(warm.status());
  }
  Result<double> one = time_trials(**remote, task, build, one_runner_trials, &variant);
  if (!one.ok()) return fail(one.status());
  const double remote_per_trial = *one / one_runner_trials;
  while (static_cast<int>(farm.size()) < runners) {
    if (!add_runner()) return 1;
  }
  for (int round = 0; round < 2; ++round) {
    Result<double> warm = time_trials(**remote, task, build, runners * ro.chunk, &variant);
    if (!warm.ok()) return fail(warm.status());
  }
  const int many_trials = runners * trials_per_runner;
  Result<double> many = time_trials(**remote, task, build, many_trials, &variant);
  if (!many.ok()) return fail(many.status());

  // (b)
  Result<std::shared_ptr<grpc::ChannelCredentials>> creds =
      farm::client_credentials({certs, "", false});
  if (!creds.ok()) return fail(creds.status());
  Result<double> cycles =
      lease_cycles_per_second(tracker.address(), *creds, lease_threads, lease_seconds);
  if (!cycles.ok()) return fail(cycles.status());

  const double rate_one = one_runner_trials / *one;
  const double rate_many = many_trials / *many;
  std::printf("farm_bench: sleep kernel of 100 ms per call, %u hardware threads\n",
              std::thread::hardware_concurrency());
  std::printf(
      "(a) 1 runner: %d trials in %.2f s = %.2f trials/s; %d runners: %d trials in %.2f s "
      "= %.2f trials/s; speed-up %.1fx (target >= 12x with 16)\n",
      one_runner_trials, *one, rate_one, runners, many_trials, *many, rate_many,
      rate_many / rate_one);
  std::printf(
      "(b) tracker: %.0f lease/release cycles/s with %d clients over %.1f s "
      "(target >= 2000)\n",
      *cycles, lease_threads, lease_seconds);
  std::printf(
      "(c) per trial: local runner %.1f ms, remote runner %.1f ms; remote overhead "
      "%.1f ms (target <= 20 ms)\n",
      local_per_trial * 1e3, remote_per_trial * 1e3, (remote_per_trial - local_per_trial) * 1e3);
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  static const kiln::SleepTemplate sleep_template;
  kiln::ops::register_template(&sleep_template);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "measure-worker") {
    kiln::runner::serve_exec_worker(kiln::WorkerProcess::kExecRequestFd,
                                    kiln::WorkerProcess::kExecResponseFd);
    return 0;
  }
  if (mode == "runner") {
    // gRPC's threads must not take SIGINT/SIGTERM: run_runner waits for them with sigwait.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    return kiln::runner_main(argc - 1, argv + 1);
  }
  return kiln::bench_main(argc, argv);
}
