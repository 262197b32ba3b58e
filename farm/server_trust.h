// Why a TLS client of the farm cannot connect, when the reason is the server's certificate.
// gRPC reports a failed handshake as UNAVAILABLE ("Socket closed", "failed to connect"), the
// same as a server that is down, so a client given another farm's certificates would retry or
// wait as if the server were starting. On such a failure the client asks this module: it opens
// its own TLS connection (OpenSSL, no verification, no client certificate), fetches the server's
// chain and checks it against the client's CA as gRPC does (signature, dates, server purpose,
// the host name).
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "farm/security.h"

namespace kiln::farm {

// For a server at `address` (HOST:PORT) whose certificate the CA in `ca_pem` (a file) does not
// accept, one sentence saying so: "the server at HOST:PORT presents a certificate (subject ...,
// issuer ..., key id ...) not signed by the CA in DIR/ca.pem (key id ...)", or why else the
// certificate is refused (expired, issued for other names). Empty when the certificate is
// accepted, when the server cannot be reached within `timeout_s` or does not speak TLS (then
// nothing is known about its certificate), and when `ca_pem` cannot be read.
std::string untrusted_server_reason(const std::string& address, const std::string& ca_pem,
                                    double timeout_s = 5);

// The reason above for a call to `address` that ended with `status`, when that status can hide
// a failed handshake (UNAVAILABLE or DEADLINE_EXCEEDED) and `auth` uses TLS; else empty.
std::string untrusted_server_reason(const grpc::Status& status, const std::string& address,
                                    const ClientAuth& auth);

}  // namespace kiln::farm
