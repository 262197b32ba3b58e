// gRPC's own log routed into kiln's (common/log.h). gRPC writes its errors to stderr in its own
// format, and a failed TLS handshake reads "E1202 14:18:40.012 23241
// ssl_transport_security.cc:1501] Handshake failed with fatal error SSL_ERROR_SSL:
// error:0A000086:SSL routines::certificate verify failed." — true, but it names neither the cause a
// farm's operator can act on nor the program. Routed, such a line becomes one kiln line naming the
// cause: a warning in a server's log, a debug line in a client command's, whose own error already
// says which certificate was refused (farm/server_trust.h). gRPC's other errors become kiln
// warnings prefixed "grpc:"; its debug and info lines are shown only at the debug level.
#pragma once

#include <string>
#include <string_view>

namespace kiln::farm {

enum class HandshakeLog {
  kWarning,  // a server's: nothing else tells its operator why a peer could not connect
  kDebug,    // a client command's: its error names the refused certificate
};

// Installs the routing for this process (gRPC keeps one log function per process). Call after
// log::init, before the first channel or server is made; a later call replaces the mode.
void route_grpc_log(HandshakeLog handshakes);

// The kiln sentence for one gRPC log message when it reports a failed TLS handshake, e.g. "a TLS
// handshake failed: the peer's certificate is not signed by this farm's CA (certificate verify
// failed)"; empty for any other message.
std::string handshake_failure_reason(std::string_view grpc_message);

}  // namespace kiln::farm
