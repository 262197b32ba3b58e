// The dashboard's server, over HTTP or HTTPS: cpp-httplib's request handling behind a gate that
// slow or unauthenticated clients cannot hold.
//
// cpp-httplib gives each connection a worker for its whole life and bounds only the time between
// two bytes, so four clients sending a header byte every 3 s held all four workers and an
// authorized /metrics waited forever. Here every connection has a thread of its own (up to
// kConnections at once) that reads the request's head (request line and headers) under one
// deadline for the whole head, kHeadDeadline, without holding a worker; a connection that has
// not sent a complete head by then, or sends more than kMaxHeadBytes, is closed. Only a complete
// head enters the gate of kWorkers slots, and an unauthenticated one (as `authorized` judges its
// head) only while more than one slot is free, so one worker is always left for authorized
// requests. Keep-alive requests go through the same wait and gate. Over HTTPS the TLS handshake
// is part of the head's deadline (cpp-httplib's SSLServer would do it on a worker).
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace kiln::dashboard {

class GatedServer final : public httplib::Server {
 public:
  static constexpr int kWorkers = 4;
  static constexpr int kConnections = 64;
  static constexpr std::chrono::seconds kHeadDeadline{5};
  static constexpr size_t kMaxHeadBytes = 32 * 1024;

  // `authorized`: whether a request's raw head ("GET / HTTP/1.1\r\nName: value\r\n...") carries
  // valid credentials. Called on connection threads, concurrently.
  explicit GatedServer(std::function<bool(std::string_view head)> authorized);
  ~GatedServer() override;

  // Serves HTTPS with this certificate chain and key (PEM files); false when they cannot be
  // loaded or do not match. Call before listening.
  bool use_tls(const std::string& cert_chain_pem, const std::string& key_pem);

 private:
  class Gate;
  bool process_and_close_socket(socket_t sock) override;

  std::function<bool(std::string_view)> authorized_;
  SSL_CTX* tls_ = nullptr;  // when serving HTTPS
  std::mutex mu_;
  std::condition_variable freed_;
  int busy_ = 0;  // slots in use, guarded by mu_
};

// The value of header `name` (case-insensitive) in a raw request head, empty if absent.
std::string head_header(std::string_view head, std::string_view name);
// The request target of a raw request head ("/metrics?x=1"), empty if malformed.
std::string head_target(std::string_view head);

}  // namespace kiln::dashboard
