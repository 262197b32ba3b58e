#include "common/wire.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::wire {

namespace {

Status write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return IoError(std::string("pipe write failed: ") + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return IoError("pipe closed by the peer");
    if (r < 0) return IoError(std::string("pipe read failed: ") + std::strerror(errno));
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

constexpr uint32_t kMaxFrame = 1u << 30;

}  // namespace

Status write_frame(int fd, std::string_view payload) {
  if (payload.size() > kMaxFrame) return InvalidArgument("frame too large");
  uint32_t n = static_cast<uint32_t>(payload.size());
  KILN_RETURN_IF_ERROR(write_all(fd, reinterpret_cast<const char*>(&n), sizeof n));
  return write_all(fd, payload.data(), payload.size());
}

Result<std::string> read_frame(int fd) {
  uint32_t n = 0;
  KILN_RETURN_IF_ERROR(read_all(fd, reinterpret_cast<char*>(&n), sizeof n));
  if (n > kMaxFrame) return IoError("malformed frame: length " + std::to_string(n));
  std::string payload(n, '\0');
  KILN_RETURN_IF_ERROR(read_all(fd, payload.data(), n));
  return payload;
}

void serve_frames(int request_fd, int response_fd,
                  const std::function<void(Reader& request, Writer& reply)>& handle) {
  while (true) {
    Result<std::string> frame = read_frame(request_fd);
    if (!frame.ok()) return;  // the caller closed the pipe (or it broke)
    Reader request(*frame);
    Writer reply;
    handle(request, reply);
    if (!write_frame(response_fd, reply.bytes()).ok()) return;
  }
}

}  // namespace kiln::wire
