// RemoteRunner: the Runner contract over a farm. For each batch it leases runners of
// a key from the tracker (the first one waited for, more taken while they are free, up to one per
// config), spreads the batch over them in parallel from one queue (each call takes an even share
// of what is left, at most `chunk` configs), uploads only the artifacts a runner
// does not hold (MissingArtifacts), signs every artifact's digest with the farm's key, and
// reports each measurement's outcome to the tracker (runner faults count towards quarantine).
//
// A runner that dies mid-batch (killed, network cut: the RPC fails) gives its chunk back to the
// queue; another runner measures it. A config whose runner was lost `max_attempts` times, or for
// which no runner of the key can be had, is RUNTIME_DEVICE with runner_lost. Every input gets
// exactly one result. A tracker that cannot be reached ends the batch's leasing at once (lost()).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "farm/security.h"
#include "proto/kiln.grpc.pb.h"
#include "runner/local_runner.h"
#include "runner/runner.h"

namespace kiln::runner {

struct RemoteRunnerOptions {
  std::string tracker;  // HOST:PORT
  std::string key;
  farm::ClientAuth auth;
  std::string signing_key;  // the farm's key (farm/signing.h)
  // How to measure (number, repeat, min_repeat_ms, cache flush, seed, tolerance, timeout,
  // cooldown, threads: 0 = the runner's cores). The env and exec fields are not used.
  RunnerOptions measure;
  int priority = 0;
  double wait_s = 60;    // how long a batch waits for its first runner
  int max_attempts = 3;  // runners lost under one config before it is given up
  int chunk = 4;         // configs per Measure call at most
  std::string client = "kiln tune";
};

class RemoteRunner : public Runner {
 public:
  // Checks the options and makes the tracker's channel (nothing is contacted yet).
  static Result<std::unique_ptr<RemoteRunner>> create(RemoteRunnerOptions options);

  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                 const std::vector<BuildResult>& builds) override;

  // Set when the latest run() could not lease from the tracker for any reason but "no runner
  // came free" (the tracker is down, unreachable, or refuses this client), naming the tracker.
  std::string lost() const override { return lost_; }

  const RemoteRunnerOptions& options() const { return options_; }

 private:
  RemoteRunner(RemoteRunnerOptions options, std::shared_ptr<grpc::ChannelCredentials> creds);

  RemoteRunnerOptions options_;
  std::shared_ptr<grpc::ChannelCredentials> creds_;
  std::unique_ptr<v1::Tracker::Stub> tracker_;
  std::string lost_;  // written and read by run()'s thread only
};

}  // namespace kiln::runner
