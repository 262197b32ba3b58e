// TLS and authentication for the farm's channels (DESIGN.md "Remote execution is remote code
// execution"): a runner runs the native code it is sent, so every channel is TLS and every call
// is authenticated, by a client certificate signed by the farm's CA (mutual TLS) or by a bearer
// token ("authorization: Bearer <token>") over TLS.
//
// `kiln certs init DIR` makes the farm's files with OpenSSL's C API:
//   ca.pem, ca.key          the farm CA (EC P-256, 10 years)
//   server.pem, server.key  signed by the CA, for localhost and 127.0.0.1 (and --host names)
//   client.pem, client.key  signed by the CA, for clients and runners (mutual TLS)
//   token                   a random bearer token (64 hex digits)
// Keys and the token are written 0600, the directory 0700.
#pragma once

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::farm {

struct CertFiles {
  std::string ca_pem, ca_key, server_pem, server_key, client_pem, client_key, token;
};
CertFiles cert_files(const std::string& dir);

// Creates `dir` (or uses an empty one) and writes the files above. `hosts` adds names or IPv4
// addresses to the server certificate's subjectAltName. kIo if a file exists already (nothing
// is overwritten) or cannot be written; kInvalidArgument for a malformed host.
Status init_certs(const std::string& dir, const std::vector<std::string>& hosts = {});

// A bearer token file's token (trailing newline and spaces trimmed). kIo when unreadable;
// kInvalidArgument for one shorter than 32 characters or holding whitespace.
Result<std::string> read_token(const std::string& path);
// A new random token: 64 hex digits (32 bytes from OpenSSL's RAND_bytes).
Result<std::string> random_token();
// Writes `token` to a new file (mode 0600; never replaces one: kIo if it exists).
Status write_token_file(const std::string& path, const std::string& token);

// Server credentials from a certs directory: TLS with the server certificate; a call is accepted
// with a client certificate that the farm CA signed, or with the bearer token of DIR/token (when
// that file exists). Anything else is UNAUTHENTICATED, a certificate of another CA included.
// Errors name the missing or unreadable file.
Result<std::shared_ptr<grpc::ServerCredentials>> server_credentials(const std::string& certs_dir);

// How a client reaches a farm service.
struct ClientAuth {
  std::string certs_dir;   // CA to trust; DIR/client.{pem,key} used when both exist
  std::string token_file;  // a bearer token sent with every call (empty: none)
  bool insecure = false;   // plaintext (only for a server started with --insecure)
};
Result<std::shared_ptr<grpc::ChannelCredentials>> client_credentials(const ClientAuth& auth);

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

// "HOST:PORT" split; kInvalidArgument naming `option` (e.g. "--listen") for anything else.
struct HostPort {
  std::string host;
  int port = 0;
};
Result<HostPort> parse_listen_address(const std::string& option, const std::string& address);

// The bind rule: servers listen on 127.0.0.1 by default; any other address needs TLS with
// authentication (`secured`) unless `insecure` is given, and then `*warning` says what is
// exposed. kInvalidArgument for a malformed address or a refused one, saying what to pass.
Status check_listen_address(const std::string& address, bool secured, bool insecure,
                            std::string* warning);

}  // namespace kiln::farm
