#include "dashboard/gated_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace kiln::dashboard {

namespace {

using Clock = std::chrono::steady_clock;

int millis_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                : ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

// One read or write on a non-blocking socket, through TLS when `ssl` is set, waiting at most
// `timeout_ms` for the socket: bytes moved, 0 at the end of the stream, -1 on error or timeout.
ssize_t transfer(int fd, SSL* ssl, bool reading, char* buf, size_t size, int timeout_ms) {
  for (;;) {
    short wait = reading ? POLLIN : POLLOUT;
    if (ssl != nullptr) {
      const int n = static_cast<int>(std::min<size_t>(size, 1 << 30));
      int r = reading ? SSL_read(ssl, buf, n) : SSL_write(ssl, buf, n);
      if (r > 0) return r;
      int e = SSL_get_error(ssl, r);
      if (e == SSL_ERROR_ZERO_RETURN) return 0;
      if (e == SSL_ERROR_WANT_READ) {
        wait = POLLIN;
      } else if (e == SSL_ERROR_WANT_WRITE) {
        wait = POLLOUT;
      } else {
        return -1;
      }
    } else {
      ssize_t r = reading ? ::recv(fd, buf, size, 0) : ::send(fd, buf, size, MSG_NOSIGNAL);
      if (r >= 0) return r;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    }
    if (!wait_for(fd, wait, timeout_ms)) return -1;
  }
}

// The TLS handshake of a new connection, by `deadline`.
bool tls_accept(int fd, SSL* ssl, Clock::time_point deadline) {
  for (;;) {
    int r = SSL_accept(ssl);
    if (r == 1) return true;
    int e = SSL_get_error(ssl, r);
    short wait = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (wait == 0 || !wait_for(fd, wait, millis_until(deadline))) return false;
  }
}

// A connection's stream: the bytes read ahead while waiting for a head come first, then the
// socket, with cpp-httplib's per-operation timeouts. The socket is non-blocking.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}

  // Reads until `pending_` holds a complete head ("\r\n\r\n"): false on the deadline, end of
  // stream, an error or a head over kMaxHeadBytes.
  bool wait_for_head(Clock::time_point deadline) {
    // Each new byte is searched once: a client sending a byte at a time costs no more.
    size_t searched = 0;
    for (;;) {
      if (pending_.find("\r\n\r\n", searched) != std::string::npos) return true;
      searched = pending_.size() < 3 ? 0 : pending_.size() - 3;
      if (pending_.size() > GatedServer::kMaxHeadBytes) return false;
      char buf[4096];
      ssize_t n = transfer(fd_, ssl_, true, buf, sizeof buf, millis_until(deadline));
      if (n <= 0 || Clock::now() > deadline) return false;
      pending_.append(buf, static_cast<size_t>(n));
    }
  }
  std::string_view head() const { return pending_; }

  bool is_readable() const override {
    return !pending_.empty() || (ssl_ != nullptr && SSL_pending(ssl_) > 0) ||
           wait_for(fd_, POLLIN, kTimeoutMs);
  }
  bool is_writable() const override { return wait_for(fd_, POLLOUT, kTimeoutMs); }
  ssize_t read(char* ptr, size_t size) override {
    if (!pending_.empty()) {
      size_t n = std::min(size, pending_.size());
      std::copy_n(pending_.data(), n, ptr);
      pending_.erase(0, n);
      return static_cast<ssize_t>(n);
    }
    return transfer(fd_, ssl_, true, ptr, size, kTimeoutMs);
  }
  ssize_t write(const char* ptr, size_t size) override {
    return transfer(fd_, ssl_, false, const_cast<char*>(ptr), size, kTimeoutMs);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(fd_, false, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  // The read and write timeouts of one operation once a request is being served.
  static constexpr int kTimeoutMs = 5000;
  int fd_;
  SSL* ssl_;
  std::string pending_;
};

}  // namespace

// One slot of the gate, held while a request is served.
class GatedServer::Gate {
 public:
  Gate(GatedServer& s, bool authorized) : s_(s) {
    // An unauthenticated request leaves the last slot free for an authorized one.
    const int limit = authorized ? kWorkers : kWorkers - 1;
    std::unique_lock<std::mutex> lock(s_.mu_);
    s_.freed_.wait(lock, [&] { return s_.busy_ < limit; });
    ++s_.busy_;
  }
  ~Gate() {
    {
      std::lock_guard<std::mutex> lock(s_.mu_);
      --s_.busy_;
    }
    s_.freed_.notify_all();
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

 private:
  GatedServer& s_;
};

GatedServer::GatedServer(std::function<bool(std::string_view)> authorized)
    : authorized_(std::move(authorized)) {}

GatedServer::~GatedServer() { SSL_CTX_free(tls_); }

bool GatedServer::use_tls(const std::string& cert_chain_pem, const std::string& key_pem) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return false;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_chain_pem.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_pem.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    SSL_CTX_free(ctx);
    return false;
  }
  SSL_CTX_free(tls_);
  tls_ = ctx;
  return true;
}

bool GatedServer::process_and_close_socket(socket_t sock) {
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  const auto first_deadline = Clock::now() + kHeadDeadline;
  SSL* ssl = nullptr;
  if (tls_ != nullptr) {
    ssl = SSL_new(tls_);
    if (ssl == nullptr || SSL_set_fd(ssl, sock) != 1 || !tls_accept(sock, ssl, first_deadline)) {
      SSL_free(ssl);
      ::close(sock);
      return false;
    }
  }
  ConnectionStream stream(sock, ssl);
  const size_t max_requests = keep_alive_max_count_;
  const auto keep_alive = std::chrono::seconds(keep_alive_timeout_sec_);
  bool ok = true;
  for (size_t served = 0; served < max_requests && is_running(); ++served) {
    const auto deadline = served == 0 ? first_deadline : Clock::now() + keep_alive;
    if (!stream.wait_for_head(deadline)) break;
    Gate slot(*this, authorized_(stream.head()));
    bool closed = false;
    ok = process_request(stream, served + 1 == max_requests, closed, nullptr);
    if (!ok || closed) break;
  }
  if (ssl != nullptr) {
    SSL_shutdown(ssl);  // best effort: the close_notify, without waiting for the peer's
    SSL_free(ssl);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

std::string head_header(std::string_view head, std::string_view name) {
  size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    const size_t begin = at + 2;
    const size_t end = head.find("\r\n", begin);
    std::string_view line = head.substr(begin, end == std::string_view::npos ? end : end - begin);
    const size_t colon = line.find(':');
    if (colon == name.size() &&
        std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
      }
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
        value.remove_suffix(1);
      }
      return std::string(value);
    }
    at = end;
  }
  return "";
}

std::string head_target(std::string_view head) {
  const size_t first = head.find(' ');
  if (first == std::string_view::npos) return "";
  const size_t second = head.find(' ', first + 1);
  const size_t eol = head.find("\r\n");
  if (second == std::string_view::npos || second > eol) return "";
  return std::string(head.substr(first + 1, second - first - 1));
}

}  // namespace kiln::dashboard
