#include "farm/security.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_metadata_processor.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/check.h"
#include "farm/openssl_ptr.h"

namespace kiln::farm {

CertFiles cert_files(const std::string& dir) {
  auto f = [&](const char* name) { return (std::filesystem::path(dir) / name).string(); };
  return CertFiles{f("ca.pem"),     f("ca.key"),     f("server.pem"), f("server.key"),
                   f("client.pem"), f("client.key"), f("token")};
}

namespace {

// OpenSSL's queued errors as text, cleared.
std::string openssl_errors() {
  std::string out;
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

Result<Pkey> new_key() {
  Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return InternalError("cannot generate an EC P-256 key: " + openssl_errors());
  return key;
}

Status add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return InvalidArgument("certificate extension '" + value + "': " + openssl_errors());
  int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (!ok) return InternalError("cannot add extension '" + value + "': " + openssl_errors());
  return Status::Ok();
}

// A certificate for `key` named `cn`, signed by issuer_key (self-signed when issuer is null).
Result<Cert> make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
                       const std::vector<std::pair<int, std::string>>& extensions) {
  Cert cert(X509_new());
  if (!cert) return InternalError("X509_new: " + openssl_errors());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) {
    return InternalError("RAND_bytes: " + openssl_errors());
  }
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("kiln farm"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* iss = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(iss));
  for (const auto& [nid, value] : extensions) {
    KILN_RETURN_IF_ERROR(add_ext(cert.get(), iss, nid, value));
  }
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0) {
    return InternalError("cannot sign the certificate for " + cn + ": " + openssl_errors());
  }
  return cert;
}

template <typename F>
Result<std::string> pem_of(F write) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (!bio || !write(bio)) {
    BIO_free(bio);
    return InternalError("cannot write PEM: " + openssl_errors());
  }
  char* data;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

Result<std::string> key_pem(EVP_PKEY* key) {
  return pem_of([&](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
}
Result<std::string> cert_pem(X509* cert) {
  return pem_of([&](BIO* b) { return PEM_write_bio_X509(b, cert) == 1; });
}

// Writes a new file (never replaces one) with the given mode.
Status write_new_file(const std::string& path, const std::string& text, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return IoError("cannot create " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      return IoError("cannot write " + path + ": " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, mode) != 0 || ::close(fd) != 0) {
    return IoError("cannot finish " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return IoError("cannot read " + path);
  return s.str();
}

bool is_ipv4(const std::string& host) {
  in_addr a;
  return inet_pton(AF_INET, host.c_str(), &a) == 1;
}

// Accepts a call whose peer presented a client certificate the farm CA signed (TLS verified
// it: the peer is authenticated), or that carries "authorization: Bearer <token>".
// Parses PEM text into a certificate (null if it is none).
Cert parse_cert(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), pem.size()), BIO_free);
  return Cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

// Authenticates every call: by a client certificate that the farm's CA signed, else by the bearer
// token. The TLS layer asks for a client certificate without verifying it, so that a certificate
// of another CA reaches this check and is answered UNAUTHENTICATED (a failed handshake would show
// the client only UNAVAILABLE, as if the server were down).
class TokenOrCertProcessor final : public grpc::AuthMetadataProcessor {
 public:
  TokenOrCertProcessor(X509* ca, std::string token)
      : store_(X509_STORE_new(), X509_STORE_free),
        // No token configured: no bearer value authenticates, "Bearer " with nothing after it
        // included.
        expected_(token.empty() ? std::string() : "Bearer " + std::move(token)) {
    KILN_CHECK(store_ && X509_STORE_add_cert(store_.get(), ca) == 1)
        << "cannot hold the farm CA: " << openssl_errors();
  }

  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* /*response_metadata*/) override {
    std::vector<grpc::string_ref> certs =
        context->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
    if (!certs.empty()) {
      if (signed_by_farm_ca(std::string_view(certs[0].data(), certs[0].size()))) {
        return grpc::Status::OK;
      }
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "the client certificate is not signed by this farm's CA");
    }
    auto it = auth_metadata.find("authorization");
    if (it == auth_metadata.end()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "no client certificate and no bearer token");
    }
    if (expected_.empty()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "this farm accepts only client certificates (no token is configured)");
    }
    const grpc::string_ref& got = it->second;
    bool match = got.size() == expected_.size() &&
                 CRYPTO_memcmp(got.data(), expected_.data(), got.size()) == 0;
    if (!match) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong bearer token");
    consumed_auth_metadata->insert(std::make_pair(std::string(it->first.data(), it->first.size()),
                                                  std::string(got.data(), got.size())));
    return grpc::Status::OK;
  }

 private:
  // The chain check of a TLS client: the CA's signature, validity dates, and the client purpose
  // (a server certificate of the farm is not a client's).
  bool signed_by_farm_ca(std::string_view pem) const {
    Cert cert = parse_cert(pem);
    if (!cert) return false;
    std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(),
                                                                        X509_STORE_CTX_free);
    if (!ctx || X509_STORE_CTX_init(ctx.get(), store_.get(), cert.get(), nullptr) != 1)
      return false;
    X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
    return X509_verify_cert(ctx.get()) == 1;
  }

  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store_;
  std::string expected_;  // empty: tokens are not accepted (no token file)
};

}  // namespace

Result<std::string> read_token(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string token, read_file(path));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.size() < 32) {
    return InvalidArgument(path + ": the token is shorter than 32 characters");
  }
  if (token.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgument(path + ": the token holds whitespace");
  }
  return token;
}

Result<std::string> random_token() {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1) return InternalError("RAND_bytes: " + openssl_errors());
  std::string token;
  for (unsigned char c : raw) {
    static const char* hex = "0123456789abcdef";
    token += hex[c >> 4];
    token += hex[c & 15];
  }
  return token;
}

Status write_token_file(const std::string& path, const std::string& token) {
  return write_new_file(path, token + "\n", 0600);
}

Status init_certs(const std::string& dir, const std::vector<std::string>& hosts) {
  std::string san = "DNS:localhost,IP:127.0.0.1";
  for (const std::string& h : hosts) {
    if (is_ipv4(h)) {
      san += ",IP:" + h;
      continue;
    }
    bool ok =
        !h.empty() && h.size() <= 253 &&
        h.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") ==
            std::string::npos;
    if (!ok) return InvalidArgument("--host '" + h + "': not a host name or IPv4 address");
    san += ",DNS:" + h;
  }
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    if (::mkdir(dir.c_str(), 0700) != 0) {
      return IoError("cannot create " + dir + ": " + std::strerror(errno));
    }
  }
  const CertFiles f = cert_files(dir);
  for (const std::string& p :
       {f.ca_pem, f.ca_key, f.server_pem, f.server_key, f.client_pem, f.client_key, f.token}) {
    if (std::filesystem::exists(p, ec)) {
      return IoError(p + " exists already; kiln certs init never overwrites a farm's files");
    }
  }

  KILN_ASSIGN_OR_RETURN(Pkey ca_key, new_key());
  KILN_ASSIGN_OR_RETURN(Cert ca, make_cert(ca_key.get(), "kiln farm CA", nullptr, nullptr,
                                           {{NID_basic_constraints, "critical,CA:TRUE"},
                                            {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                            {NID_subject_key_identifier, "hash"}}));
  KILN_ASSIGN_OR_RETURN(Pkey server_key, new_key());
  KILN_ASSIGN_OR_RETURN(Cert server,
                        make_cert(server_key.get(), "localhost", ca.get(), ca_key.get(),
                                  {{NID_basic_constraints, "critical,CA:FALSE"},
                                   {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                   {NID_ext_key_usage, "serverAuth"},
                                   {NID_subject_alt_name, san},
                                   {NID_authority_key_identifier, "keyid:always"}}));
  KILN_ASSIGN_OR_RETURN(Pkey client_key, new_key());
  KILN_ASSIGN_OR_RETURN(Cert client,
                        make_cert(client_key.get(), "kiln farm client", ca.get(), ca_key.get(),
                                  {{NID_basic_constraints, "critical,CA:FALSE"},
                                   {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                   {NID_ext_key_usage, "clientAuth"},
                                   {NID_authority_key_identifier, "keyid:always"}}));
  KILN_ASSIGN_OR_RETURN(std::string token, random_token());

  KILN_ASSIGN_OR_RETURN(std::string ca_key_pem, key_pem(ca_key.get()));
  KILN_ASSIGN_OR_RETURN(std::string ca_pem, cert_pem(ca.get()));
  KILN_ASSIGN_OR_RETURN(std::string server_key_pem, key_pem(server_key.get()));
  KILN_ASSIGN_OR_RETURN(std::string server_pem, cert_pem(server.get()));
  KILN_ASSIGN_OR_RETURN(std::string client_key_pem, key_pem(client_key.get()));
  KILN_ASSIGN_OR_RETURN(std::string client_pem, cert_pem(client.get()));
  KILN_RETURN_IF_ERROR(write_new_file(f.ca_key, ca_key_pem, 0600));
  KILN_RETURN_IF_ERROR(write_new_file(f.ca_pem, ca_pem, 0644));
  KILN_RETURN_IF_ERROR(write_new_file(f.server_key, server_key_pem, 0600));
  KILN_RETURN_IF_ERROR(write_new_file(f.server_pem, server_pem, 0644));
  KILN_RETURN_IF_ERROR(write_new_file(f.client_key, client_key_pem, 0600));
  KILN_RETURN_IF_ERROR(write_new_file(f.client_pem, client_pem, 0644));
  KILN_RETURN_IF_ERROR(write_token_file(f.token, token));
  return Status::Ok();
}

Result<std::shared_ptr<grpc::ServerCredentials>> server_credentials(const std::string& certs_dir) {
  const CertFiles f = cert_files(certs_dir);
  KILN_ASSIGN_OR_RETURN(std::string ca, read_file(f.ca_pem));
  KILN_ASSIGN_OR_RETURN(std::string key, read_file(f.server_key));
  KILN_ASSIGN_OR_RETURN(std::string cert, read_file(f.server_pem));
  std::string token;
  std::error_code ec;
  if (std::filesystem::exists(f.token, ec)) {
    KILN_ASSIGN_OR_RETURN(token, read_token(f.token));
  }
  Cert ca_cert = parse_cert(ca);
  if (!ca_cert) return InvalidArgument(f.ca_pem + ": not a PEM certificate");
  // Client certificates are verified by TokenOrCertProcessor, not in the handshake (see there).
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
  options.pem_root_certs = ca;
  options.pem_key_cert_pairs.push_back({key, cert});
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::SslServerCredentials(options);
  creds->SetAuthMetadataProcessor(std::make_shared<TokenOrCertProcessor>(ca_cert.get(), token));
  return creds;
}

Result<std::shared_ptr<grpc::ChannelCredentials>> client_credentials(const ClientAuth& auth) {
  if (auth.insecure) {
    if (!auth.certs_dir.empty() || !auth.token_file.empty()) {
      return InvalidArgument("--insecure cannot be combined with --certs or --token-file");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (auth.certs_dir.empty()) {
    return InvalidArgument(
        "a farm channel needs TLS: pass --certs DIR (from kiln certs init), or --insecure for a "
        "server started with --insecure");
  }
  const CertFiles f = cert_files(auth.certs_dir);
  grpc::SslCredentialsOptions options;
  KILN_ASSIGN_OR_RETURN(options.pem_root_certs, read_file(f.ca_pem));
  std::error_code ec;
  if (std::filesystem::exists(f.client_pem, ec) && std::filesystem::exists(f.client_key, ec)) {
    KILN_ASSIGN_OR_RETURN(options.pem_cert_chain, read_file(f.client_pem));
    KILN_ASSIGN_OR_RETURN(options.pem_private_key, read_file(f.client_key));
  }
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::SslCredentials(options);
  if (!auth.token_file.empty()) {
    KILN_ASSIGN_OR_RETURN(std::string token, read_token(auth.token_file));
    creds = grpc::CompositeChannelCredentials(creds, grpc::AccessTokenCredentials(token));
  }
  return creds;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr a;
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

Result<HostPort> parse_listen_address(const std::string& option, const std::string& address) {
  size_t colon = address.rfind(':');
  std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (colon == std::string::npos || colon == 0 || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return InvalidArgument(option + " '" + address +
                           "': expected HOST:PORT, e.g. 127.0.0.1:9190 (port 0: any free port)");
  }
  return HostPort{address.substr(0, colon), std::stoi(port)};
}

Status check_listen_address(const std::string& address, bool secured, bool insecure,
                            std::string* warning) {
  KILN_ASSIGN_OR_RETURN(HostPort at, parse_listen_address("--listen", address));
  const std::string& host = at.host;
  if (is_loopback_host(host)) return Status::Ok();
  if (!secured && !insecure) {
    return InvalidArgument("refusing to listen on " + address +
                           " without TLS and authentication: pass --certs DIR (from kiln certs "
                           "init), or --insecure to expose the service to anyone who can reach it");
  }
  if (!secured && warning) {
    *warning = "listening on " + address +
               " WITHOUT TLS OR AUTHENTICATION (--insecure): anyone who can reach it can use "
               "this farm";
  }
  return Status::Ok();
}

}  // namespace kiln::farm
