#include "cli/tuner_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "farm/server_trust.h"

namespace kiln::cli {

void add_tuner_client_options(CLI::App* cmd, TunerClientOptions* o) {
  cmd->add_option("--server", o->server, "HOST:PORT of kiln serve")
      ->default_str(kDefaultServeAddress);
  cmd->add_option("--certs", o->auth.certs_dir,
                  "trust this kiln certs init CA (and use its client certificate when present)");
  cmd->add_option("--token-file,--token", o->auth.token_file, "send this bearer token file");
  cmd->add_flag("--insecure", o->auth.insecure, "plaintext (a server started with --insecure)");
  add_bounded(cmd, "--timeout", &o->timeout_s, 0, 3600, "seconds to wait for the server", true);
}

std::unique_ptr<v1::Tuner::Stub> tuner_stub(const TunerClientOptions& o) {
  farm::ClientAuth auth = o.auth;
  const std::string host = o.server.substr(0, o.server.rfind(':'));
  if (auth.certs_dir.empty() && auth.token_file.empty() && farm::is_loopback_host(host)) {
    auth.insecure = true;
  }
  std::shared_ptr<grpc::ChannelCredentials> creds = value_or_exit(farm::client_credentials(auth));
  return v1::Tuner::NewStub(grpc::CreateChannel(o.server, creds));
}

std::unique_ptr<grpc::ClientContext> tuner_context(const TunerClientOptions& o, bool stream) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!stream) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000)));
  }
  return ctx;
}

void throw_rpc_error(const TunerClientOptions& o, const grpc::Status& s) {
  bool bad_input = s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                   s.error_code() == grpc::StatusCode::NOT_FOUND ||
                   s.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
  if (std::string why = farm::untrusted_server_reason(s, o.server, o.auth); !why.empty()) {
    throw CommandError{"kiln serve " + o.server + ": " + why, kUsageError};
  }
  std::string hint = s.error_code() == grpc::StatusCode::UNAVAILABLE
                         ? " (is kiln serve running there? see --server)"
                         : "";
  throw CommandError{"kiln serve " + o.server + ": " + s.error_message() + hint,
                     bad_input ? kUsageError : kFailed};
}

int64_t parse_job_id(const std::string& what, const std::string& text) {
  size_t used = 0;
  int64_t id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || id <= 0) {
    throw CommandError{what + ": expected a job id (a positive integer), got '" + text + "'"};
  }
  return id;
}

}  // namespace kiln::cli
