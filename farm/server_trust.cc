#include "farm/server_trust.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>

#include "farm/openssl_ptr.h"

namespace kiln::farm {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A TCP connection to host:port within timeout_s (the first address that answers), whose reads
// and writes then time out after timeout_s too; -1 when none answers.
int connect_tcp(const std::string& host, int port, double timeout_s) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  std::unique_ptr<addrinfo, FreeWith<freeaddrinfo>> list(found);
  const int timeout_ms = static_cast<int>(timeout_s * 1000);
  for (addrinfo* a = found; a; a = a->ai_next) {
    Fd s{::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol)};
    if (s.fd < 0) continue;
    if (::connect(s.fd, a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) continue;
      pollfd p{s.fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, timeout_ms) != 1 ||
          ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        continue;
      }
    }
    const int flags = ::fcntl(s.fd, F_GETFL);
    timeval tv{static_cast<time_t>(timeout_s),
               static_cast<suseconds_t>((timeout_s - static_cast<time_t>(timeout_s)) * 1e6)};
    if (flags < 0 || ::fcntl(s.fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
        ::setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        ::setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
      continue;
    }
    int fd = s.fd;
    s.fd = -1;
    return fd;
  }
  return -1;
}

std::string name_of(const X509_NAME* name) {
  char buf[512];
  X509_NAME_oneline(name, buf, sizeof buf);
  return buf;
}

// A key identifier's first bytes in hex, e.g. "3f:a2:...": kiln's CAs all have the same subject
// name, so the key is what tells one farm's from another's.
std::string key_id_text(const ASN1_OCTET_STRING* id) {
  if (!id) return "none";
  static const char* hex = "0123456789abcdef";
  std::string out;
  const int n = std::min(ASN1_STRING_length(id), 8);
  const unsigned char* d = ASN1_STRING_get0_data(id);
  for (int i = 0; i < n; ++i) {
    if (!out.empty()) out += ':';
    out += hex[d[i] >> 4];
    out += hex[d[i] & 15];
  }
  return out;
}

// A write on a socket the server has closed raises SIGPIPE, whose default action ends the
// process: the probing thread holds it blocked and discards one the probe raised.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    sigset_t pending;
    if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

std::string untrusted_server_reason(const std::string& address, const std::string& ca_pem,
                                    double timeout_s) {
  Result<HostPort> at = parse_listen_address("the server address", address);
  if (!at.ok()) return "";
  std::string host = at->host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  CertStore trusted(X509_STORE_new());
  if (!trusted || X509_STORE_load_file(trusted.get(), ca_pem.c_str()) != 1) {
    ERR_clear_error();
    return "";
  }
  SigpipeBlocked no_sigpipe;
  Fd fd{connect_tcp(host, at->port, timeout_s)};
  if (fd.fd < 0) return "";

  SslCtx ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return "";
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);  // verified below, to say why not
  static const unsigned char kAlpn[] = {2, 'h', '2'};       // as gRPC offers it
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof kAlpn);
  Ssl ssl(SSL_new(ctx.get()));
  if (!ssl || SSL_set_fd(ssl.get(), fd.fd) != 1) return "";
  if (!is_ip_literal(host)) SSL_set_tlsext_host_name(ssl.get(), host.c_str());
  if (SSL_connect(ssl.get()) != 1) {
    ERR_clear_error();
    return "";
  }
  Cert cert(SSL_get1_peer_certificate(ssl.get()));
  if (!cert) return "";
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl.get());  // owned by ssl

  CertStoreCtx check(X509_STORE_CTX_new());
  if (!check || X509_STORE_CTX_init(check.get(), trusted.get(), cert.get(), chain) != 1) return "";
  X509_STORE_CTX_set_purpose(check.get(), X509_PURPOSE_SSL_SERVER);
  const bool verified = X509_verify_cert(check.get()) == 1;
  const int error = X509_STORE_CTX_get_error(check.get());
  SSL_shutdown(ssl.get());
  ERR_clear_error();

  const std::string presents = "the server at " + address + " presents a certificate (subject " +
                               name_of(X509_get_subject_name(cert.get())) + ", issuer " +
                               name_of(X509_get_issuer_name(cert.get())) + ", issuer key id " +
                               key_id_text(X509_get0_authority_key_id(cert.get())) + ")";
  if (!verified) {
    std::string ca_key = "unreadable";
    if (STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(trusted.get());
        objects && sk_X509_OBJECT_num(objects) > 0) {
      if (X509* ca = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, 0))) {
        ca_key = key_id_text(X509_get0_subject_key_id(ca));
      }
    }
    const bool unsigned_by_ca = error == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
                                error == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
                                error == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
                                error == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
                                error == X509_V_ERR_CERT_SIGNATURE_FAILURE ||
                                error == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE;
    const std::string ca = "the CA in " + ca_pem + " (key id " + ca_key + ")";
    if (unsigned_by_ca) {
      return presents + " not signed by " + ca +
             ": it belongs to another farm, or this client was given another farm's --certs";
    }
    return presents + " that " + ca + " does not accept: " + X509_verify_cert_error_string(error);
  }
  const bool names_host =
      is_ip_literal(host) ? X509_check_ip_asc(cert.get(), host.c_str(), 0) == 1
                          : X509_check_host(cert.get(), host.c_str(), host.size(), 0, nullptr) == 1;
  if (!names_host) {
    return presents + " that does not name " + host +
           " (kiln certs init --host adds names to the server certificate)";
  }
  return "";
}

std::string untrusted_server_reason(const grpc::Status& status, const std::string& address,
                                    const ClientAuth& auth) {
  if (auth.insecure || auth.certs_dir.empty()) return "";
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "";
  }
  return untrusted_server_reason(address, cert_files(auth.certs_dir).ca_pem);
}

}  // namespace kiln::farm
