#include "common/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <streambuf>

namespace kiln {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// What a non-regular file is, for messages.
const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// An output stream buffer over a file descriptor that remembers the first write error.
class FdStreamBuf final : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  bool flush_buffer() {
    const char* at = pbase();
    while (at < pptr() && error_ == 0) {
      ssize_t n = ::write(fd_, at, static_cast<size_t>(pptr() - at));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) error_ = errno;
      if (n > 0) at += n;
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return error_ == 0;
  }

  int fd_;
  int error_ = 0;
  char buffer_[64 * 1024];
};

// A temporary file beside `path`, created exclusively (never an existing file or a symlink).
Result<std::pair<int, std::string>> create_temporary(const std::string& path) {
  const std::string prefix =
      parent_dir(path) + "/." + base_name(path) + ".tmp." + std::to_string(::getpid()) + ".";
  for (int attempt = 0;; ++attempt) {
    std::string tmp = prefix + std::to_string(attempt);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return std::make_pair(fd, tmp);
    if (errno != EEXIST || attempt >= 100) {
      return IoError(path + ": cannot create the temporary file '" + tmp +
                     "': " + errno_text(errno));
    }
  }
}

}  // namespace

std::string non_regular_file_kind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  return kind_of(st.st_mode);
}

Status check_writable_path(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return IoError(path + ": cannot write: " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return IoError(path + ": refusing to write: it is " + kind_of(st.st_mode) +
                   ", and kiln writes its output only as a regular file");
  }
  return Status::Ok();
}

Status write_file_atomically(const std::string& path,
                             const std::function<Status(std::ostream&)>& write) {
  if (path.empty()) return IoError("cannot write a file with an empty name");
  KILN_RETURN_IF_ERROR(check_writable_path(path));
  KILN_ASSIGN_OR_RETURN(auto created, create_temporary(path));
  auto [fd, tmp] = created;
  auto fail = [&, fd = fd, tmp = tmp](Status s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  // An existing file keeps its mode (a log someone made group-readable stays so).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) (void)::fchmod(fd, st.st_mode & 07777);
  Status written;
  {
    FdStreamBuf buf(fd);
    std::ostream out(&buf);
    written = write(out);
    out.flush();
    if (written.ok() && (!out || buf.error() != 0)) {
      written =
          IoError(path + ": writing failed: " + errno_text(buf.error() != 0 ? buf.error() : EIO));
    }
  }
  if (!written.ok()) return fail(written);
  if (::fsync(fd) != 0) return fail(IoError(path + ": writing failed: " + errno_text(errno)));
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return IoError(path + ": writing failed: " + errno_text(err));
  }
  // Checked again just before the rename: something may have appeared at `path` meanwhile.
  Status still = check_writable_path(path);
  if (still.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    still = IoError(path + ": cannot replace it with '" + tmp + "': " + errno_text(errno));
  }
  if (!still.ok()) ::unlink(tmp.c_str());
  return still;
}

Status write_file_atomically(const std::string& path, std::string_view content) {
  return write_file_atomically(path, [content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return Status::Ok();
  });
}

namespace {

// Opens `path` for reading if it is a regular file; the descriptor and its size.
Result<std::pair<int, int64_t>> open_regular(const std::string& path, std::string_view what) {
  const std::string where = std::string(what) + " '" + path + "'";
  // O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open " + where + ": " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return IoError(where + ": cannot read: " + errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError(where + ": not a regular file (it is " + kind_of(st.st_mode) + ")");
  }
  return std::make_pair(fd, static_cast<int64_t>(st.st_size));
}

std::string too_large(const std::string& where, int64_t size, int64_t max_bytes) {
  return where + ": " + (size >= 0 ? std::to_string(size) + " bytes" : std::string("larger")) +
         ", more than the " + std::to_string(max_bytes) + " bytes kiln reads from such a file";
}

}  // namespace

Status check_readable_regular_file(const std::string& path, std::string_view what) {
  KILN_ASSIGN_OR_RETURN(auto opened, open_regular(path, what));
  ::close(opened.first);
  return Status::Ok();
}

Result<std::string> read_regular_file(const std::string& path, int64_t max_bytes,
                                      std::string_view what) {
  KILN_ASSIGN_OR_RETURN(auto opened, open_regular(path, what));
  auto [fd, size] = opened;
  const std::string where = std::string(what) + " '" + path + "'";
  if (size > max_bytes) {
    ::close(fd);
    return InvalidArgument(too_large(where, size, max_bytes));
  }
  // Read to the end, not to the size fstat saw: the file may grow (never past the limit).
  std::string bytes(static_cast<size_t>(size), '\0');
  size_t have = 0;
  for (;;) {
    if (have == bytes.size()) {
      if (static_cast<int64_t>(have) > max_bytes) {
        ::close(fd);
        return InvalidArgument(too_large(where, -1, max_bytes));
      }
      bytes.resize(have + 4096);
    }
    ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return IoError(where + ": read failed: " + errno_text(err));
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(have);
  if (static_cast<int64_t>(have) > max_bytes)
    return InvalidArgument(too_large(where, -1, max_bytes));
  return bytes;
}

}  // namespace kiln
