// `kiln runner`: a device-side runner of the farm. It registers with the tracker under
// a key (capabilities: the host target, cores, kiln version), sends heartbeats, and serves the
// Runner service (proto/kiln.proto) on its own port, which it advertises.
//
// Measure runs each item as LocalRunner does (a supervised child per batch, the reference check,
// AutoTVM's timing, the cooldown), with the child started by fork + exec of the kiln binary
// ("kiln measure-worker"; a gRPC process must not fork without exec) under an address-space
// limit, a CPU-time limit per config and a private scratch directory. Before anything runs, every
// successful build must carry the HMAC of its digest under the farm's key (farm/signing.h):
// otherwise the whole request is PERMISSION_DENIED and nothing is loaded. Artifacts are cached by
// digest: MissingArtifacts tells a client which to upload; an item may then leave its artifact
// empty. A malformed request is INVALID_ARGUMENT naming the field.
//
// Only the holder of this runner's lease may use it: a Measure request must carry a lease id that
// the tracker confirms is held on this runner (Tracker.CheckLease); a missing one is
// INVALID_ARGUMENT, one the tracker does not confirm PERMISSION_DENIED (nothing is loaded), and
// UNAVAILABLE when the tracker cannot be asked. A confirmed lease is trusted for
// kLeaseRecheckS, then asked about again, so a lease released or expired stops working soon.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/job_thread.h"
#include "exchange/space_cache.h"
#include "exchange/target.h"
#include "farm/checked_unary.h"
#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"
#include "runner/local_runner.h"

namespace kiln::runner {

// Asks the tracker whether `lease_id` is held on this runner now: OK with the seconds it has
// left, NOT_FOUND when it is not, another code when the tracker could not be asked.
using LeaseChecker = std::function<grpc::Status(const std::string& lease_id, double* seconds_left)>;

constexpr double kLeaseRecheckS = 5;

struct RunnerServiceOptions {
  std::string signing_key;               // the farm's key (farm/signing.h); required
  LeaseChecker check_lease;              // required
  std::string worker_binary;             // the kiln binary, exec'd as "measure-worker"
  std::vector<std::string> exec_prefix;  // words exec'd before it (RunnerOptions::exec_prefix)
  // The runner runs on an emulator (qemu): its times are not the board's, and its successful
  // results say so (MeasureResult::emulated), so that they are never ranked as the board's. Every output is still
  // checked, but each config runs once (number = repeat = 1, no flush, no cooldown) whatever the
  // client asked, so that the reported costs are a single emulated run, not a measurement.
  bool emulated = false;
  uint64_t max_memory_bytes = 0;    // per measurement child (RLIMIT_AS); 0: none
  double max_cpu_s_per_config = 0;  // per config and kernel thread (RLIMIT_CPU); 0: none
  std::string scratch_parent;       // children work in private directories under it
  size_t artifact_cache_bytes = 256u << 20;
  int cores = 1;  // kernel threads when the request asks for 0
};

class RunnerService final : public farm::CheckedUnaryService<v1::Runner> {
 public:
  explicit RunnerService(RunnerServiceOptions options);
  ~RunnerService() override;  // finishes the measurement in progress, ends the runner process

  grpc::Status Measure(grpc::ServerContext* context, const v1::MeasureRequest* request,
                       v1::MeasureReply* reply) override;
  grpc::Status MissingArtifacts(grpc::ServerContext* context, const v1::ArtifactQuery* request,
                                v1::ArtifactQueryReply* reply) override;

 private:
  // OK when the request's lease is held on this runner (see the file comment).
  grpc::Status check_lease(const std::string& lease_id);
  bool cached(const std::string& digest);
  void cache(const std::string& digest, const std::string& bytes);
  LocalRunner& local_runner(const RunnerOptions& options);  // on the measuring thread only

  RunnerServiceOptions options_;
  std::mutex measure_mu_;  // one Measure at a time: the cores are the kernels'
  std::unique_ptr<LocalRunner> local_;
  RunnerOptions local_options_;
  ConfigSpaceCache spaces_;

  std::mutex lease_mu_;
  std::map<std::string, std::chrono::steady_clock::time_point> confirmed_leases_;  // trusted until

  std::mutex cache_mu_;
  std::map<std::string, std::string> artifacts_;  // by digest

  // Every measurement runs on this one thread, which owns local_ and so starts its runner
  // processes: a child's PR_SET_PDEATHSIG fires when the *thread* that forked it ends, and gRPC
  // ends its handler threads as it pleases. Last member: started once the others exist, joined
  // before they go.
  JobThread measurer_{[this] { local_.reset(); }};
  std::deque<std::string> cache_order_;  // oldest first, for eviction
  size_t cache_bytes_ = 0;
};

struct RunnerServerOptions {
  std::string tracker;  // HOST:PORT
  std::string key;
  std::string name;                    // unique runner name; empty: KEY-HOSTNAME-PID
  std::string listen = "127.0.0.1:0";  // its Runner service; port 0: any free one
  farm::ClientAuth auth;               // to the tracker; auth.certs_dir also secures the server
  std::string signing_key_file;        // empty: CERTS/token, else the --token-file
  std::string kiln_version;
  // The machine's target, registered as this runner's capability: kiln passes LLVM's
  // (builder::host_target()); left empty (no triple), the runner detects it without LLVM
  // (exchange/host_target.h), as a runner built without the builder does.
  Target target;
  // How long to keep trying to register at start (a tracker starting at the same time, or slow
  // to answer on a loaded machine), each failure reported on stderr.
  double register_wait_s = 60;
  RunnerServiceOptions service;  // signing_key is read from signing_key_file; check_lease is set
};

// Serves until SIGINT or SIGTERM (REQUIRES both blocked in every thread, as run_tracker). Prints
// "kiln runner NAME listening on HOST:PORT" on stdout once registered.
Status run_runner(RunnerServerOptions options);

}  // namespace kiln::runner
