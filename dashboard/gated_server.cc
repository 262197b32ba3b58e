#include "dashboard/gated_server.h"

#include <arpa/inet.h>
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

// A connection's stream: the bytes read ahead while waiting for a head come first, then the
// socket, with cpp-httplib's per-operation timeouts.
class ConnectionStream final : public httplib::Stream {
 public:
  explicit ConnectionStream(int fd) : fd_(fd) {}

  // Reads until `pending_` holds a complete head ("\r\n\r\n"): false on the deadline, end of
  // stream, an error or a head over kMaxHeadBytes.
  bool wait_for_head(Clock::time_point deadline) {
    // Each new byte is searched once: a client sending a byte at a time costs no more.
    size_t searched = 0;
    for (;;) {
      if (pending_.find("\r\n\r\n", searched) != std::string::npos) return true;
      searched = pending_.size() < 3 ? 0 : pending_.size() - 3;
      if (pending_.size() > GatedServer::kMaxHeadBytes) return false;
      if (!wait_for(fd_, POLLIN, millis_until(deadline))) return false;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      pending_.append(buf, static_cast<size_t>(n));
    }
  }
  std::string_view head() const { return pending_; }

  bool is_readable() const override {
    return !pending_.empty() || wait_for(fd_, POLLIN, kTimeoutMs);
  }
  bool is_writable() const override { return wait_for(fd_, POLLOUT, kTimeoutMs); }
  ssize_t read(char* ptr, size_t size) override {
    if (!pending_.empty()) {
      size_t n = std::min(size, pending_.size());
      std::copy_n(pending_.data(), n, ptr);
      pending_.erase(0, n);
      return static_cast<ssize_t>(n);
    }
    if (!wait_for(fd_, POLLIN, kTimeoutMs)) return -1;
    for (;;) {
      ssize_t n = ::recv(fd_, ptr, size, 0);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!wait_for(fd_, POLLOUT, kTimeoutMs)) return -1;
    for (;;) {
      ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
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

bool GatedServer::process_and_close_socket(socket_t sock) {
  ConnectionStream stream(sock);
  const size_t max_requests = keep_alive_max_count_;
  const auto keep_alive = std::chrono::seconds(keep_alive_timeout_sec_);
  bool ok = true;
  for (size_t served = 0; served < max_requests && is_running(); ++served) {
    const auto deadline = Clock::now() + (served == 0 ? kHeadDeadline : keep_alive);
    if (!stream.wait_for_head(deadline)) break;
    Gate slot(*this, authorized_(stream.head()));
    bool closed = false;
    ok = process_request(stream, served + 1 == max_requests, closed, nullptr);
    if (!ok || closed) break;
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
