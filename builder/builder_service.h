// `kiln builder`: the Builder service (proto/kiln.proto) over a LocalBuildPool whose
// workers are exec'd "kiln build-worker" processes (a gRPC process must not fork without exec).
// A malformed request is INVALID_ARGUMENT naming the field; a config that is no config of its
// task's space is an INSTANTIATION_ERROR result, as locally.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "builder/build_pool.h"
#include "common/job_thread.h"
#include "exchange/space_cache.h"
#include "farm/checked_unary.h"
#include "proto/kiln.grpc.pb.h"

namespace kiln::builder {

class BuilderService final : public farm::CheckedUnaryService<v1::Builder> {
 public:
  BuilderService(int n_parallel, std::string worker_binary);
  ~BuilderService() override;

  grpc::Status Build(grpc::ServerContext* context, const v1::BuildRequest* request,
                     v1::BuildReply* reply) override;

 private:
  int n_parallel_;
  std::string worker_binary_;
  std::mutex build_mu_;  // one batch at a time: the pool's workers are the cores
  ConfigSpaceCache spaces_;
  // The pool lives on one thread, which starts its workers (PR_SET_PDEATHSIG fires when the
  // forking thread ends).
  std::unique_ptr<LocalBuildPool> pool_;
  double pool_timeout_s_ = 0;
  JobThread builder_{[this] { pool_.reset(); }};  // last member: joined before the pool goes
};

struct BuilderServerOptions {
  std::string listen = "127.0.0.1:0";
  std::string certs_dir;  // TLS + mutual TLS or bearer token; empty: plaintext
  bool insecure = false;
  int n_parallel = 0;  // 0: one per core
  std::string worker_binary;
};

// Serves until SIGINT or SIGTERM (REQUIRES both blocked in every thread). Prints
// "kiln builder listening on HOST:PORT" once ready.
Status run_builder(const BuilderServerOptions& options);

}  // namespace kiln::builder
