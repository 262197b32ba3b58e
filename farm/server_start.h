// What every kiln gRPC server (kiln tracker, runner, builder, serve) does the same way around its
// service: the bind rule and credentials, binding and starting, the address it reports, and
// waiting for the signal that stops it.
#pragma once

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace kiln::farm {

// The credentials of a server on `listen`: TLS from `certs_dir` (server_credentials) when given,
// else plaintext, which check_listen_address allows on a loopback address only unless `insecure`
// (the warning then goes to the log). kInvalidArgument for certs_dir with insecure, or a refused
// address.
Result<std::shared_ptr<grpc::ServerCredentials>> listen_credentials(const std::string& listen,
                                                                    const std::string& certs_dir,
                                                                    bool insecure);

// Adds the listening port to `builder` (its service and options already set) and starts the
// server; `*port` is the bound port (listen's own, or the one chosen for port 0). kIo when it
// cannot bind.
Result<std::unique_ptr<grpc::Server>> start_server(grpc::ServerBuilder& builder,
                                                   const std::string& listen,
                                                   std::shared_ptr<grpc::ServerCredentials> creds,
                                                   int* port);

// "HOST:PORT" of a server started on `listen`, with the bound port.
std::string bound_address(const std::string& listen, int port);

// How a server's clients authenticate, for its "listening on" line.
const char* security_text(bool secured);

// Blocks until SIGINT or SIGTERM arrives and returns its name. REQUIRES: both are blocked in
// every thread of the process (cli's block_stop_signals, before any thread starts).
const char* wait_for_stop_signal();

}  // namespace kiln::farm
