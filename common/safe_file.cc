#include "common/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

namespace kiln {

std::string non_regular_file_kind(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "";
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "a device";
}

Status write_regular_file_atomically(const std::string& path, std::string_view data) {
  std::string kind = non_regular_file_kind(path);
  if (!kind.empty()) return IoError(path + ": is " + kind + ", not a regular file; not replaced");
  const std::filesystem::path target(path);
  if (target.filename().empty()) return IoError(path + ": names a directory, not a file");
  // A fresh name each try: O_EXCL fails on anything already there (a planted symlink included).
  std::random_device entropy;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".%08x.tmp", static_cast<unsigned>(entropy()));
    tmp = (target.parent_path() / ("." + target.filename().string() + suffix)).string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) {
      return IoError(tmp + ": cannot create: " + std::strerror(errno));
    }
  }
  if (fd < 0) return IoError(path + ": cannot create a temporary file beside it");
  auto fail = [&](const std::string& what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return IoError(tmp + ": " + what + ": " + std::strerror(err));
  };
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("cannot flush to disk");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return IoError(tmp + ": cannot write: " + std::strerror(err));
  }
  // Checked again just before the rename: what appeared at the path meanwhile is not replaced.
  kind = non_regular_file_kind(path);
  if (!kind.empty()) {
    ::unlink(tmp.c_str());
    return IoError(path + ": is " + kind + ", not a regular file; not replaced");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return IoError(path + ": cannot write: " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace kiln
