#include "builder/builder_service.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <future>

#include "farm/convert.h"
#include "farm/message_size.h"
#include "farm/security.h"
#include "farm/server_start.h"

namespace kiln::builder {

BuilderService::BuilderService(int n_parallel, std::string worker_binary)
    : n_parallel_(n_parallel), worker_binary_(std::move(worker_binary)) {
  check_unary("Build", &BuilderService::Build);
}

BuilderService::~BuilderService() = default;

grpc::Status BuilderService::Build(grpc::ServerContext*, const v1::BuildRequest* request,
                                   v1::BuildReply* reply) {
  if (grpc::Status s =
          farm::check_request_size(*request, farm::kMaxBuilderRequestBytes, "BuildRequest");
      !s.ok()) {
    return s;
  }
  Result<farm::MeasureOptions> mo = farm::from_proto(request->options(), "BuildRequest.options");
  if (!mo.ok()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, mo.status().message());
  std::lock_guard<std::mutex> lock(build_mu_);
  std::vector<MeasureInput> inputs;
  std::vector<size_t> positions;  // of inputs in the request
  std::vector<std::optional<BuildResult>> results(request->inputs_size());
  for (int i = 0; i < request->inputs_size(); ++i) {
    const std::string field = "BuildRequest.inputs[" + std::to_string(i) + "]";
    Result<MeasureInput> in = farm::from_proto(request->inputs(i), spaces_, field);
    if (!in.ok()) {
      if (in.status().code() != StatusCode::kInstantiation) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, in.status().message());
      }
      BuildResult failed;
      failed.error = MeasureError::kInstantiationError;
      failed.message = in.status().message();
      results[i] = std::move(failed);
      continue;
    }
    inputs.push_back(std::move(in).value());
    positions.push_back(i);
  }
  const double timeout_s = mo->build_timeout_s;
  std::promise<std::vector<BuildResult>> built;
  builder_.post([&] {
    if (!pool_ || pool_timeout_s_ != timeout_s) {
      pool_ = std::make_unique<LocalBuildPool>(BuildPoolOptions{n_parallel_, timeout_s});
      pool_->exec_workers(worker_binary_);
      pool_timeout_s_ = timeout_s;
    }
    built.set_value(pool_->build(inputs));
  });
  std::vector<BuildResult> out = built.get_future().get();
  for (size_t k = 0; k < out.size(); ++k) results[positions[k]] = std::move(out[k]);
  for (auto& r : results) *reply->add_results() = farm::to_proto(*r);
  return grpc::Status::OK;
}

Status run_builder(const BuilderServerOptions& o) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds,
                        farm::listen_credentials(o.listen, o.certs_dir, o.insecure));
  BuilderService service(o.n_parallel, o.worker_binary);
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  builder.SetMaxSendMessageSize(512 << 20);
  builder.SetMaxReceiveMessageSize(farm::transport_limit(farm::kMaxBuilderRequestBytes));
  int port = 0;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server,
                        farm::start_server(builder, o.listen, creds, &port));
  std::printf("kiln builder listening on %s (%s)\n", farm::bound_address(o.listen, port).c_str(),
              farm::security_text(!o.certs_dir.empty()));
  std::fflush(stdout);
  spdlog::info("stopping ({})", farm::wait_for_stop_signal());
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return Status::Ok();
}

}  // namespace kiln::builder
