#include "farm/server_start.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "farm/security.h"

namespace kiln::farm {

Result<std::shared_ptr<grpc::ServerCredentials>> listen_credentials(const std::string& listen,
                                                                    const std::string& certs_dir,
                                                                    bool insecure) {
  const bool secured = !certs_dir.empty();
  if (secured && insecure) return InvalidArgument("--certs and --insecure exclude each other");
  std::string warning;
  KILN_RETURN_IF_ERROR(check_listen_address(listen, secured, insecure, &warning));
  if (!warning.empty()) spdlog::warn("{}", warning);
  if (!secured) return grpc::InsecureServerCredentials();
  return server_credentials(certs_dir);
}

Result<std::unique_ptr<grpc::Server>> start_server(grpc::ServerBuilder& builder,
                                                   const std::string& listen,
                                                   std::shared_ptr<grpc::ServerCredentials> creds,
                                                   int* port) {
  *port = 0;
  builder.AddListeningPort(listen, std::move(creds), port);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || *port == 0) {
    return IoError("cannot listen on " + listen + " (address in use or unavailable)");
  }
  return server;
}

std::string bound_address(const std::string& listen, int port) {
  return listen.substr(0, listen.rfind(':')) + ":" + std::to_string(port);
}

const char* security_text(bool secured) {
  return secured ? "TLS, mutual TLS or bearer token" : "plaintext";
}

const char* wait_for_stop_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  return sig == SIGINT ? "SIGINT" : "SIGTERM";
}

}  // namespace kiln::farm
