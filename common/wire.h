// A minimal binary encoding for messages between kiln's own processes (builder and runner
// workers): little-endian fixed-width numbers and length-prefixed strings, framed by a u32
// length. Both ends are the same binary, so there is no versioning; a malformed frame is
// reported, never trusted.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::wire {

class Writer {
 public:
  void u64(uint64_t v) { append(&v, sizeof v); }
  void i64(int64_t v) { append(&v, sizeof v); }
  void f64(double v) { append(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    append(s.data(), s.size());
  }
  void f64s(const std::vector<double>& v) {
    u64(v.size());
    for (double x : v) f64(x);
  }
  const std::string& bytes() const { return buffer_; }

 private:
  void append(const void* p, size_t n) { buffer_.append(static_cast<const char*>(p), n); }
  std::string buffer_;
};

// Reads what a Writer wrote. After the first failure every read returns a zero value and ok()
// stays false.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  uint64_t u64() { return fixed<uint64_t>(); }
  int64_t i64() { return fixed<int64_t>(); }
  double f64() { return fixed<double>(); }
  std::string str() {
    uint64_t n = u64();
    if (!ok_ || n > bytes_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  std::vector<double> f64s() {
    uint64_t n = u64();
    std::vector<double> v;
    if (!ok_ || n > (bytes_.size() - pos_) / sizeof(double)) {
      ok_ = false;
      return v;
    }
    for (uint64_t i = 0; i < n; ++i) v.push_back(f64());
    return v;
  }
  bool ok() const { return ok_; }

 private:
  template <typename T>
  T fixed() {
    T v{};
    if (!ok_ || bytes_.size() - pos_ < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Writes one frame (u32 length + payload) to a file descriptor, retrying short writes and EINTR.
Status write_frame(int fd, std::string_view payload);
// Reads one frame. kIo with "closed" in the message when the peer closed the pipe.
Result<std::string> read_frame(int fd);

// A worker's side of the conversation (common/worker_process.h): for each request frame read
// from request_fd, `handle` reads the request and writes the reply, which goes back as one
// frame on response_fd. Returns when the peer closes either pipe.
void serve_frames(int request_fd, int response_fd,
                  const std::function<void(Reader& request, Writer& reply)>& handle);

}  // namespace kiln::wire
